"""Secret-bearing command lines from the az, aws, gcloud and azcopy references.

Real option names and command shapes; fake values, each unique (`FAKE<n>...`),
so a test can require that none of them appears anywhere it could leak to.
"""

from __future__ import annotations

SAS = "sv=2022-11-02&ss=b&srt=co&sp=rl&se=2030-01-01&sig=FAKE26sasSignature%3D"
SECRET_LINES: tuple[tuple[str, ...], ...] = (
    # az
    ("az", "vm", "create", "-g", "pilot", "-n", "vm1", "--image", "Ubuntu2204",
     "--admin-username", "azureuser", "--admin-password", "FAKE01adminPw!"),
    ("az", "vmss", "create", "-g", "pilot", "-n", "ss", "--admin-password=FAKE02vmssPw"),
    ("az", "login", "--service-principal", "-u", "app-id", "-p", "FAKE03spSecret",
     "--tenant", "contoso.onmicrosoft.com"),
    ("az", "login", "--service-principal", "-u", "app-id", "--federated-token", "FAKE04oidc"),
    ("az", "sql", "server", "create", "-g", "pilot", "-n", "db1", "-u", "admin",
     "--admin-password", "FAKE05sqlPw"),
    ("az", "storage", "blob", "upload", "--account-name", "acct", "--account-key",
     "FAKE06accountKey==", "-c", "c", "-f", "x", "-n", "x"),
    ("az", "storage", "blob", "list", "--account-name", "acct", "-c", "c",
     "--sas-token", "FAKE07sasToken"),
    ("az", "storage", "container", "list", "--connection-string",
     "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=FAKE08connKey;"),
    ("az", "keyvault", "secret", "set", "--vault-name", "kv", "--name", "db",
     "--value", "FAKE09vaultValue"),
    ("az", "webapp", "config", "appsettings", "set", "-g", "pilot", "-n", "app",
     "--settings", "DB_PASSWORD=FAKE10appSetting"),
    ("az", "container", "create", "-g", "pilot", "-n", "c", "--image", "nginx",
     "--secure-environment-variables", "API_TOKEN=FAKE11secureEnv"),
    ("az", "deployment", "group", "create", "-g", "pilot", "--template-file", "main.bicep",
     "--parameters", "adminPassword=FAKE12bicepParam"),
    ("az", "aks", "create", "-g", "pilot", "-n", "k", "--windows-admin-password",
     "FAKE13winPw", "--client-secret", "FAKE14aksSecret"),
    ("az", "acr", "login", "-n", "reg", "--username", "u", "--password", "FAKE15acrPw"),
    ("az", "rest", "--method", "get", "--url", "https://management.azure.com/x",
     "--headers", "Authorization=Bearer FAKE16bearer"),
    ("az", "webapp", "deployment", "source", "config", "-g", "pilot", "-n", "app",
     "--repo-url", "https://deploy:FAKE17userinfo@github.com/o/r.git"),
    ("az", "ad", "app", "credential", "reset", "--id", "app-id", "--password", "FAKE18adPw"),
    ("az", "mysql", "flexible-server", "create", "-g", "pilot", "-n", "m",
     "--admin-user", "a", "--admin-password=FAKE19mysqlPw"),
    # a token as a URL's whole user-info (no password part), as git hosts take it
    ("az", "repos", "import", "create", "--git-source-url",
     "https://FAKE43userOnlyToken@dev.azure.com/o/p/_git/r"),
    # a secret-bearing value joined to an option whose own name is no secret
    ("az", "functionapp", "config", "appsettings", "set", "-g", "pilot", "-n", "f",
     "--settings=DB_PASSWORD=FAKE44joinedSetting"),
    # aws
    ("aws", "configure", "set", "aws_secret_access_key", "FAKE20configureSecret"),
    ("aws", "configure", "set", "aws_session_token", "FAKE21sessionToken",
     "--profile", "dev"),
    ("aws", "configure", "set", "default.aws_secret_access_key", "FAKE22dottedSecret"),
    ("aws", "iam", "create-login-profile", "--user-name", "bob", "--password", "FAKE23iamPw"),
    ("aws", "rds", "create-db-instance", "--db-instance-identifier", "db",
     "--master-username", "admin", "--master-user-password", "FAKE24rdsPw"),
    ("aws", "secretsmanager", "create-secret", "--name", "s", "--secret-string",
     "FAKE25secretString"),
    ("aws", "ssm", "put-parameter", "--name", "/app/db", "--type", "SecureString",
     "--value", "FAKE27ssmValue"),
    ("aws", "cloudformation", "create-stack", "--stack-name", "s", "--parameters",
     "ParameterKey=DBPassword,ParameterValue=FAKE28cfnParam"),
    ("aws", "lambda", "update-function-configuration", "--function-name", "f",
     "--environment", "Variables={DB_PASSWORD=FAKE29lambdaEnv}"),
    ("aws", "rds", "create-db-cluster", "--cli-input-json",
     '{"DBClusterIdentifier": "c", "MasterUserPassword": "FAKE30jsonPw"}'),
    ("aws", "s3", "cp", "s3://bucket/key", "-", "--sse-c", "AES256", "--sse-c-key",
     "FAKE31sseKey"),
    ("aws", "sts", "get-session-token", "--serial-number", "arn:aws:iam::1:mfa/bob",
     "--token-code", "FAKE32mfa"),
    ("aws", "cognito-idp", "admin-set-user-password", "--user-pool-id", "p", "--username",
     "u", "--password", "FAKE33cognitoPw", "--permanent"),
    ("aws", "s3", "cp", "x", "https://bucket.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256"
     "&X-Amz-Credential=FAKE34cred&X-Amz-Signature=FAKE35sig"),
    # gcloud
    ("gcloud", "sql", "users", "set-password", "root", "--instance", "i",
     "--password=FAKE36gsqlPw"),
    ("gcloud", "sql", "instances", "create", "i", "--root-password", "FAKE37rootPw"),
    ("gcloud", "config", "set", "auth/access_token_file", "/tmp/FAKE38tokenFile"),
    ("gcloud", "auth", "activate-service-account", "--key-file=/tmp/FAKE39keyfile.json"),
    ("gcloud", "compute", "instances", "create", "vm", "--metadata",
     "windows-password=FAKE40metaPw"),
    # azcopy
    ("azcopy", "copy", f"https://acct.blob.core.windows.net/c/f?{SAS}", "./local"),
    ("azcopy", "sync", "./local", "https://acct.blob.core.windows.net/c?sp=racwdl&sig=FAKE41sync"),
    ("azcopy", "login", "--service-principal", "--application-id", "app",
     "--certificate-path", "/tmp/FAKE42cert.pem"),
)  # fmt: skip


def fake_values(line: tuple[str, ...]) -> list[str]:
    """The fake secret in a line: the part of each argument from `FAKE` to its end."""
    found = []
    for arg in line:
        at = arg.find("FAKE")
        if at != -1:
            value = arg[at:]
            for stop in ("}", '"', "%", "&", ".json", ".pem", "@", ";"):
                value = value.split(stop, 1)[0]
            found.append(value)
    return found
