"""Ingestion jobs in SQL: queued, claimed under a lease, parsed and embedded by a worker, cancelled."""
