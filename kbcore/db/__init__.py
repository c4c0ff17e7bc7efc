"""Database: SQLAlchemy 2 models, engine set-up, Alembic migrations and the chat lease."""
