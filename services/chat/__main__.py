"""``python -m services.chat``: run the chat service until SIGTERM."""

from kbcore.rpc.service_main import run_service
from services.chat.server import create_server, open_deps

if __name__ == "__main__":
    run_service("chat", open_deps, create_server)
