"""Microsoft.Network in the fake ARM: network interfaces and public IP addresses."""
