"""`python -m cloudguard`: the same command as the `cloudguard` console script."""

from cloudguard.cli import main

main()
