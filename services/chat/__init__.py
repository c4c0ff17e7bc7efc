"""Chat service: applications, chats and records; orchestrates one question end to end."""
