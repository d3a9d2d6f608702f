"""Reaching hosts: the inventory, the transports (local, SSH, exec), jump hosts, host keys and the
connection pool."""
