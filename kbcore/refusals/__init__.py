"""How a refusal travels beyond the process that raised it: the one catalogue of what each
domain error is on every surface (``error_catalogue``), and the reasons a gRPC call's trailing
metadata carries where its status code alone cannot say (``reasons``).

The catalogue names the reasons, and ``kbcore.rpc`` ends calls with both; so they sit below
``kbcore.rpc`` and import nothing of it. The gateway, which holds no database code, reads them."""
