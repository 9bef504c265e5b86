"""Settings: one declaration per option becomes a flag, a cloudguard.toml key and a checked value.

Below the command line (cloudguard.cli), above the engines: the auditor, the
reaper and the history take requests built here and import nothing of this
package. What an option is, and the value parsers every owner shares, stay in
the cloud kernel (`cloudguard.cloud.options`): the core, an evidence source
and an adapter declare theirs with them. Finding and reading the file itself
is `cloudguard.project_file`'s, which the seal's registry reads too.

    core_options     the core's own options (`Settings`), and every option's owner
    option_spec      a declaration -> a typer parameter, a parsed command-line or file value
    resolve          defaults, then cloudguard.toml's tables, then the command line: `Settings`
    command_line     `with_settings`: a command's parameters; options declared elsewhere
    history_values   the values of `[history]` and `[notify]`, each parsed on its own
    config_errors    `ConfigError` (97, naming where), the nearest trusted file, unknown keys
    engine_requests  the one boundary: `Settings` -> the policy, the evidence request, each
                     cloud's sweep request
"""
