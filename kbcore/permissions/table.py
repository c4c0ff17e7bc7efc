"""Every HTTP route and every RPC, with what it needs: the one place that says who may call what.

A route's requirements name the path parameter holding the object they are about (``dataset_id``,
``app_id``); an RPC's name the request field (``dataset_id``, ``application_id``). "" = none. A
route or RPC missing here is refused by the check (and ``tests/unit/test_permission_table.py``
fails), so a new one cannot be open by omission.
"""

from __future__ import annotations

from dataclasses import dataclass

from kbcore.permissions.roles import Need


@dataclass(frozen=True)
class Requirement:
    need: Need
    object_from: str = ""  # path parameter (HTTP) or request field (gRPC) naming the object


def _r(need: Need, object_from: str = "") -> tuple[Requirement, ...]:
    return (Requirement(need, object_from),)


DS, APP = "dataset_id", "app_id"
_DATASET_PATH = "/api/dataset/{dataset_id}"
_DOCUMENT_PATH = _DATASET_PATH + "/document/{document_id}"
_APP_PATH = "/api/application/{app_id}"
_KEY_PATH = _APP_PATH + "/api_key"
_RECORD_PATH = _APP_PATH + "/chat/{chat_id}/chat_record"

# "METHOD /path/{template}" → requirements (all must hold).
ROUTES: dict[str, tuple[Requirement, ...]] = {
    # datasets, documents, paragraphs, search (the retrieval service)
    "GET /api/dataset": _r(Need.DATASET_READ),
    "POST /api/dataset": _r(Need.DATASET_CREATE),
    f"PUT {_DATASET_PATH}": _r(Need.DATASET_WRITE, DS),
    f"DELETE {_DATASET_PATH}": _r(Need.DATASET_WRITE, DS),
    "GET /api/dataset/document/upload_rules": _r(Need.DATASET_READ),
    "POST /api/dataset/document/split": _r(Need.DATASET_CREATE),
    f"POST {_DATASET_PATH}/document": _r(Need.DATASET_WRITE, DS),
    f"GET {_DATASET_PATH}/document": _r(Need.DATASET_READ, DS),
    f"POST {_DATASET_PATH}/document/web": _r(Need.DATASET_WRITE, DS),
    f"GET {_DOCUMENT_PATH}": _r(Need.DATASET_READ, DS),
    f"DELETE {_DOCUMENT_PATH}": _r(Need.DATASET_WRITE, DS),
    f"PUT {_DOCUMENT_PATH}/cancel_task": _r(Need.DATASET_WRITE, DS),
    f"PUT {_DOCUMENT_PATH}/sync": _r(Need.DATASET_WRITE, DS),
    f"PUT {_DATASET_PATH}/sync_web": _r(Need.DATASET_WRITE, DS),
    f"GET {_DATASET_PATH}/hit_test": _r(Need.DATASET_READ, DS),
    f"GET {_DATASET_PATH}/hit_test_rounds": _r(Need.DATASET_READ, DS),
    f"GET {_DOCUMENT_PATH}/paragraph/{{current_page}}/{{page_size}}": _r(Need.DATASET_READ, DS),
    f"POST {_DOCUMENT_PATH}/paragraph": _r(Need.DATASET_WRITE, DS),
    f"PUT {_DOCUMENT_PATH}/paragraph/{{paragraph_id}}": _r(Need.DATASET_WRITE, DS),
    f"DELETE {_DOCUMENT_PATH}/paragraph/{{paragraph_id}}": _r(Need.DATASET_WRITE, DS),
    f"GET {_DATASET_PATH}/export": _r(Need.DATASET_READ, DS),
    f"GET {_DOCUMENT_PATH}/problem": _r(Need.DATASET_READ, DS),
    f"GET {_DOCUMENT_PATH}/paragraph/{{paragraph_id}}/problem": _r(Need.DATASET_READ, DS),
    f"POST {_DOCUMENT_PATH}/paragraph/{{paragraph_id}}/problem": _r(Need.DATASET_WRITE, DS),
    f"PUT {_DOCUMENT_PATH}/paragraph/{{paragraph_id}}/problem/{{problem_id}}/un_association": _r(
        Need.DATASET_WRITE, DS
    ),
    f"PUT {_DATASET_PATH}/problem/{{problem_id}}": _r(Need.DATASET_WRITE, DS),
    f"DELETE {_DATASET_PATH}/problem/{{problem_id}}": _r(Need.DATASET_WRITE, DS),
    # chatting (the chat service checks the chat is the caller's)
    "POST /api/application/chat_message/{chat_id}": _r(Need.CHAT_ASK),
    "POST /api/application/chat_message/{chat_id}/stop": _r(Need.CHAT_ASK),
    f"GET {_APP_PATH}/chat/open": _r(Need.CHAT_ASK, APP),
    f"GET {_RECORD_PATH}/{{page}}/{{size}}": _r(Need.CHAT_READ, APP),
    f"GET {_RECORD_PATH}/{{record_id}}": _r(Need.CHAT_READ, APP),
    f"PUT {_RECORD_PATH}/{{record_id}}/vote": _r(Need.CHAT_ASK, APP),
    f"GET {_APP_PATH}/chat/client/{{page}}/{{size}}": _r(Need.ANY_CALLER, APP),
    f"PUT {_APP_PATH}/chat/client/{{chat_id}}": _r(Need.ANY_CALLER, APP),
    f"DELETE {_APP_PATH}/chat/client/{{chat_id}}": _r(Need.ANY_CALLER, APP),
    "POST /api/application/authentication": _r(Need.PUBLIC),
    "GET /api/profile": _r(Need.PUBLIC),
    "GET /api/application/embed": _r(Need.PUBLIC),
    "GET /api/application/profile": _r(Need.ANY_CALLER),
    # the OpenAI-compatible endpoint
    f"POST {_APP_PATH}/chat/completions": _r(Need.CHAT_ASK, APP),
    "POST /v1/chat/completions": _r(Need.CHAT_ASK),
    f"POST {_APP_PATH}/completions": _r(Need.CHAT_ASK, APP),
    "POST /v1/completions": _r(Need.CHAT_ASK),
    f"GET {_APP_PATH}/models": _r(Need.CHAT_READ, APP),
    "GET /v1/models": _r(Need.CHAT_READ),
    f"GET {_APP_PATH}/models/{{model}}": _r(Need.CHAT_READ, APP),
    "GET /v1/models/{model}": _r(Need.CHAT_READ),
    # an application's log, feedback and reports
    f"GET {_APP_PATH}/chat/{{current_page}}/{{page_size}}": _r(Need.APPLICATION_READ, APP),
    f"POST {_APP_PATH}/chat/export": _r(Need.APPLICATION_READ, APP),
    # an application key exports its own records (the operator's log, with votes and filters, is POST)
    f"GET {_APP_PATH}/chat/export": _r(Need.LOG_READ, APP),
    f"GET {_APP_PATH}/statistics/chat_record_aggregate_trend": _r(Need.APPLICATION_READ, APP),
    f"GET {_APP_PATH}/gap_report": _r(Need.APPLICATION_READ, APP),
    f"GET {_APP_PATH}/gap_report/export": _r(Need.APPLICATION_READ, APP),
    f"PUT {_RECORD_PATH}/{{record_id}}/dataset/{{dataset_id}}/document_id/{{document_id}}/improve": (
        Requirement(Need.APPLICATION_WRITE, APP),
        Requirement(Need.DATASET_WRITE, DS),
    ),
    # applications and what they hand out
    "GET /api/application": _r(Need.APPLICATION_READ),
    "POST /api/application": _r(Need.APPLICATION_CREATE),
    # a visitor or key reads its own application's name and description (the chat service shows it no more)
    f"GET {_APP_PATH}": _r(Need.CHAT_READ, APP),
    f"PUT {_APP_PATH}": _r(Need.APPLICATION_WRITE, APP),
    f"POST {_APP_PATH}/eval": _r(Need.APPLICATION_WRITE, APP),
    f"POST {_KEY_PATH}": _r(Need.APPLICATION_WRITE, APP),
    f"GET {_KEY_PATH}": _r(Need.APPLICATION_WRITE, APP),
    f"PUT {_KEY_PATH}/{{api_key_id}}": _r(Need.APPLICATION_WRITE, APP),
    f"DELETE {_KEY_PATH}/{{api_key_id}}": _r(Need.APPLICATION_WRITE, APP),
    f"POST {_KEY_PATH}/{{api_key_id}}/rotate": _r(Need.APPLICATION_WRITE, APP),
    f"POST {_APP_PATH}/access_token": _r(Need.APPLICATION_WRITE, APP),
    f"GET {_APP_PATH}/access_token": _r(Need.APPLICATION_WRITE, APP),
    f"PUT {_APP_PATH}/access_token": _r(Need.APPLICATION_WRITE, APP),
    # model endpoints
    "GET /api/model": _r(Need.MODEL_READ),
    "GET /api/model/deployment": _r(Need.MODEL_READ),
    "POST /api/model": _r(Need.ADMIN),
    "PUT /api/model/{model_id}": _r(Need.ADMIN),
    "DELETE /api/model/{model_id}": _r(Need.ADMIN),
    "POST /api/model/{model_id}/check": _r(Need.ADMIN),
    # the deployment
    "GET /metrics": _r(Need.ADMIN),
}

# User accounts (the chat service's UserService), MaxKB's routes where MaxKB has the operation.
ROUTES.update(
    {
        "POST /api/user/login": _r(Need.PUBLIC),
        "POST /api/user/signin_link": _r(Need.PUBLIC),
        "POST /api/user/logout": _r(Need.SIGNED_IN),
        "GET /api/user": _r(Need.SIGNED_IN),
        "PUT /api/user/re_password": _r(Need.SIGNED_IN),
        "GET /api/user/token": _r(Need.SIGNED_IN),
        "POST /api/user/token": _r(Need.SIGNED_IN),
        "DELETE /api/user/token/{token_id}": _r(Need.SIGNED_IN),
        "GET /api/user_manage": _r(Need.ADMIN),
        "GET /api/user_manage/{current_page}/{page_size}": _r(Need.ADMIN),
        "POST /api/user_manage": _r(Need.ADMIN),
        "PUT /api/user_manage/{user_id}": _r(Need.ADMIN),
        "DELETE /api/user_manage/{user_id}": _r(Need.ADMIN),
        "PUT /api/user_manage/{user_id}/re_password": _r(Need.ADMIN),
        "POST /api/user_manage/{user_id}/signin_link": _r(Need.ADMIN),
        "GET /api/audit": _r(Need.ADMIN),
        "GET /api/audit/export": _r(Need.ADMIN),
    }
)

_CHAT, _RETRIEVAL = "kb.chat.v1.", "kb.retrieval.v1."
AID, DID, DIDS = "application_id", "dataset_id", "dataset_ids"
LOG_AID = "filter.application_id"  # a dotted field reaches into a message field of the request

# "package.Service/Method" → requirements. Context RPCs are only the chat service's own calls.
RPCS: dict[str, tuple[Requirement, ...]] = {
    f"{_CHAT}AnswerService/Ask": _r(Need.CHAT_ASK),
    f"{_CHAT}AnswerService/Stop": _r(Need.CHAT_ASK),
    f"{_CHAT}AnswerService/GetRecord": _r(Need.CHAT_READ, AID),
    f"{_CHAT}AnswerService/ListRecords": _r(Need.CHAT_READ, AID),
    f"{_CHAT}AnswerService/ExportRecords": _r(Need.LOG_READ, AID),
    f"{_CHAT}ApplicationService/CreateApplication": _r(Need.APPLICATION_CREATE),
    f"{_CHAT}ApplicationService/GetApplication": _r(Need.CHAT_READ, AID),
    f"{_CHAT}ApplicationService/UpdateApplication": _r(Need.APPLICATION_WRITE, "application.id"),
    f"{_CHAT}ApplicationService/ListApplications": _r(Need.APPLICATION_READ),
    f"{_CHAT}ApplicationService/OpenChat": _r(Need.CHAT_ASK, AID),
    f"{_CHAT}ApplicationService/ListChats": _r(Need.ANY_CALLER),
    f"{_CHAT}ApplicationService/RenameChat": _r(Need.ANY_CALLER),
    f"{_CHAT}ApplicationService/DeleteChat": _r(Need.ANY_CALLER),
    f"{_CHAT}AccessService/CreateApiKey": _r(Need.APPLICATION_WRITE, AID),
    f"{_CHAT}AccessService/CreateAccessToken": _r(Need.APPLICATION_WRITE, AID),
    f"{_CHAT}AccessService/AuthenticateVisitor": _r(Need.PUBLIC),
    f"{_CHAT}AccessService/GetShareLinkSites": _r(Need.PUBLIC),
    f"{_CHAT}AccessService/WhoAmI": _r(Need.ANY_CALLER),
    f"{_CHAT}AccessService/ListApiKeys": _r(Need.APPLICATION_WRITE, AID),
    f"{_CHAT}AccessService/UpdateApiKey": _r(Need.APPLICATION_WRITE, AID),
    f"{_CHAT}AccessService/RotateApiKey": _r(Need.APPLICATION_WRITE, AID),
    f"{_CHAT}AccessService/ListAccessTokens": _r(Need.APPLICATION_WRITE, AID),
    f"{_CHAT}AccessService/UpdateAccessToken": _r(Need.APPLICATION_WRITE, AID),
    f"{_CHAT}AccessService/RotateAccessToken": _r(Need.APPLICATION_WRITE, AID),
    f"{_CHAT}OperationsService/ListLog": _r(Need.APPLICATION_READ, LOG_AID),
    f"{_CHAT}OperationsService/ExportLog": _r(Need.APPLICATION_READ, LOG_AID),
    f"{_CHAT}OperationsService/VoteRecord": _r(Need.CHAT_ASK, AID),
    f"{_CHAT}OperationsService/ImproveRecord": (
        Requirement(Need.APPLICATION_WRITE, AID),
        Requirement(Need.DATASET_WRITE, DID),
    ),
    f"{_CHAT}OperationsService/GapReport": _r(Need.APPLICATION_READ, AID),
    f"{_CHAT}OperationsService/Usage": _r(Need.APPLICATION_READ, AID),
    f"{_CHAT}OperationsService/ListAudit": _r(Need.ADMIN),
    f"{_CHAT}ModelService/CreateModel": _r(Need.ADMIN),
    f"{_CHAT}ModelService/ListModels": _r(Need.MODEL_READ),
    f"{_CHAT}ModelService/UpdateModel": _r(Need.ADMIN),
    f"{_CHAT}ModelService/DeleteModel": _r(Need.ADMIN),
    f"{_CHAT}ModelService/CheckModel": _r(Need.ADMIN),
    f"{_CHAT}UserService/SignIn": _r(Need.PUBLIC),
    f"{_CHAT}UserService/RedeemSignInLink": _r(Need.PUBLIC),
    f"{_CHAT}UserService/SignOut": _r(Need.SIGNED_IN),
    f"{_CHAT}UserService/ChangePassword": _r(Need.SIGNED_IN),
    f"{_CHAT}UserService/CreatePersonalToken": _r(Need.SIGNED_IN),
    f"{_CHAT}UserService/ListPersonalTokens": _r(Need.SIGNED_IN),
    f"{_CHAT}UserService/RevokePersonalToken": _r(Need.SIGNED_IN),
    f"{_CHAT}UserService/CreateUser": _r(Need.ADMIN),
    f"{_CHAT}UserService/ListUsers": _r(Need.ADMIN),
    f"{_CHAT}UserService/UpdateUser": _r(Need.ADMIN),
    f"{_CHAT}UserService/DeleteUser": _r(Need.ADMIN),
    f"{_CHAT}UserService/CreateSignInLink": _r(Need.ADMIN),
    f"{_RETRIEVAL}SearchService/Retrieve": _r(Need.DATASET_READ, DIDS),
    f"{_RETRIEVAL}SearchService/Search": _r(Need.DATASET_READ, DIDS),
    f"{_RETRIEVAL}SearchService/Evaluate": _r(Need.DATASET_READ, DIDS),
    f"{_RETRIEVAL}SearchService/GroupTexts": _r(Need.ADMIN),
    f"{_RETRIEVAL}DatasetService/CreateDataset": _r(Need.DATASET_CREATE),
    f"{_RETRIEVAL}DatasetService/ListDatasets": _r(Need.DATASET_READ),
    f"{_RETRIEVAL}DatasetService/DeleteDataset": _r(Need.DATASET_WRITE, DID),
    f"{_RETRIEVAL}DatasetService/UpdateDataset": _r(Need.DATASET_WRITE, DID),
    f"{_RETRIEVAL}DocumentService/AddDocument": _r(Need.DATASET_WRITE, DID),
    f"{_RETRIEVAL}DocumentService/SubmitDocuments": _r(Need.DATASET_WRITE, DID),
    f"{_RETRIEVAL}DocumentService/ListDocuments": _r(Need.DATASET_READ, DID),
    f"{_RETRIEVAL}DocumentService/GetDocument": _r(Need.DATASET_READ, DID),
    f"{_RETRIEVAL}DocumentService/CancelIngestion": _r(Need.DATASET_WRITE, DID),
    f"{_RETRIEVAL}DocumentService/DeleteDocument": _r(Need.DATASET_WRITE, DID),
    f"{_RETRIEVAL}DocumentService/SyncDocuments": _r(Need.DATASET_WRITE, DID),
    f"{_RETRIEVAL}DocumentService/PreviewSplit": _r(Need.DATASET_CREATE),
    # A streamed upload is checked by its first message, its head (``kbcore.rpc.handlers.scoped``).
    f"{_RETRIEVAL}DocumentService/UploadDocuments": _r(Need.DATASET_WRITE, "head.dataset_id"),
    f"{_RETRIEVAL}DocumentService/PreviewUploads": _r(Need.DATASET_CREATE),
    f"{_RETRIEVAL}ParagraphService/ListParagraphs": _r(Need.DATASET_READ, DID),
    f"{_RETRIEVAL}ParagraphService/AddParagraph": _r(Need.DATASET_WRITE, DID),
    f"{_RETRIEVAL}ParagraphService/UpdateParagraph": _r(Need.DATASET_WRITE, DID),
    f"{_RETRIEVAL}ParagraphService/DeleteParagraph": _r(Need.DATASET_WRITE, DID),
    f"{_RETRIEVAL}ParagraphService/ListQuestions": _r(Need.DATASET_READ, DID),
    f"{_RETRIEVAL}ParagraphService/AttachQuestion": _r(Need.DATASET_WRITE, DID),
    f"{_RETRIEVAL}ParagraphService/UpdateQuestion": _r(Need.DATASET_WRITE, DID),
    f"{_RETRIEVAL}ParagraphService/DetachQuestion": _r(Need.DATASET_WRITE, DID),
}


def requirements_for_rpc(method: str) -> tuple[Requirement, ...] | None:
    """The requirements of ``/package.Service/Method`` (a gRPC method path), None if unlisted."""
    return RPCS.get(method.lstrip("/"))
