"""``python -m services.context``: run the context service until SIGTERM."""

from kbcore.rpc.service_main import run_service
from services.context.server import create_server, open_deps

if __name__ == "__main__":
    run_service("context", open_deps, create_server)
