"""The HTTP API's response shapes, as pydantic models: MaxKB's envelope ``{"code", "message",
"data"}`` with a typed ``data``, and OpenAI's objects on the compatible routes.

A MaxKB answer is built as its shape (``gateway.presenter`` fills one in from a service's proto)
and sent as its ``wire()``: the shape is the one list of an object's keys and their order, and
building it refuses a key it does not name or one it needs and lacks. A route also declares its
shape (``response_model=``) for ``/openapi.json`` and returns a ``JSONResponse``, which FastAPI
sends as it is: no second validation or serialisation on the way out. The objects still written
as dicts (OpenAI's, by ``gateway.openai.wire``, and a few small ones a route writes itself) are
held to their shapes by the fuzz run's schema-conformance check.
"""
