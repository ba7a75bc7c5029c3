"""The hardening fuzz suite: mutated real artifacts and odd filesystems driven through the CLI."""
