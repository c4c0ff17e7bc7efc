"""Developer tools: the local stack launcher and the demo seeding."""
