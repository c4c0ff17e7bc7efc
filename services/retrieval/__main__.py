"""``python -m services.retrieval``: run the retrieval service until SIGTERM."""

from kbcore.rpc.service_main import run_service
from services.retrieval.server import create_server, open_deps

if __name__ == "__main__":
    run_service("retrieval", open_deps, create_server)
