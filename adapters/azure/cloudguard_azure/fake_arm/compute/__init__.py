"""Microsoft.Compute in the fake ARM: virtual machines, managed disks, their operations."""
