"""Addresses the services reason about: a caller's (counted per network, IPv6 per /64) and the
gateway's own (where a local client connects, what a printed link points at)."""
