"""Microsoft.ResourceGraph in the fake ARM: the query cloudguard's Resource Graph engine sends."""
