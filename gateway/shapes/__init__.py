"""The HTTP API's response shapes, as pydantic models, for ``/openapi.json``: MaxKB's envelope
``{"code", "message", "data"}`` with a typed ``data``, and OpenAI's objects on the compatible
routes.

They describe what ``gateway.presenter`` and ``gateway.openai.wire`` already build; they build
nothing. A route declares its shape (``response_model=``) and still returns its pre-built
``JSONResponse``, which FastAPI sends as it is: no second validation or serialisation on the
way out. Every shape forbids keys it does not name, so the fuzz run's schema-conformance check
and the golden files' test (``tests/unit/test_response_shapes.py``) catch a shape that drifts
from the wire.
"""
