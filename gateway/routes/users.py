"""People's accounts on MaxKB's routes (docs/access.md, People and roles): signing in and out,
one's own account, password and personal tokens, and the administrators' user management. The
chat service's ``UserService`` does the work; who may call which route is
``kbcore.permissions.table``'s.

Bodies are checked here before anything is sent on, in sentences that never repeat what was sent
(a password or token must not come back in an error): usernames 1..64 characters, stripped, not
only spaces, no control characters; passwords at most 256 characters (a 1 MB one never reaches
the password hash), new ones at least 8, and ``re_password`` the same. Sign-in, by password or by
one-time link, is limited per client address (``gateway.signin_limit``: passwords and links
counted apart, so guesses do not hold a link back); a password sign-in also by the chat
service's failure counts, whose 429 says in ``Retry-After`` when to try again.
"""

from __future__ import annotations

import unicodedata
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import JSONResponse
from pydantic import AfterValidator, AwareDatetime, BaseModel, Field, StringConstraints, model_validator
from pydantic_core import PydanticCustomError

from gateway.backends import AnonymousBackend, Backend, CallerBackend
from gateway.errors import ApiError, ok
from gateway.permission_check.principals import who_of
from gateway.permission_check.route_check import current_principal
from gateway.shapes.envelope import REFUSALS, Envelope, Shape
from gateway.shapes.validation_words import refused_field
from gateway.signin_limit import link_admitted, signin_admitted
from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from kbcore.limits import MAX_PAGE, MAX_PAGE_SIZE
from kbcore.permissions.roles import Kind, Need, Principal, allows
from kbcore.words.said import Said, said

router = APIRouter(prefix="/api", tags=["user"], responses=REFUSALS)

MAX_USERNAME_CHARS = 64
MIN_PASSWORD_CHARS, MAX_PASSWORD_CHARS = 8, 256
MAX_TOKEN_NAME_CHARS = 100
MAX_GRANTS = 1000
ROLE_NAMES = {pb.ROLE_ADMIN: "admin", pb.ROLE_EDITOR: "editor", pb.ROLE_VIEWER: "viewer"}
ROLES = {name: role for role, name in ROLE_NAMES.items()}
NO_USER = said("no_such_user")
NOTHING_TO_CHANGE = said("send_least_one_role_active_datasets")
PASSWORDS_DIFFER = said("password_re_password_differ")
RoleName = Literal["admin", "editor", "viewer"]


def _refused(kind: str, words: Said) -> PydanticCustomError:
    """A field's refusal of kind ``kind``: its English as pydantic's message, and its words in the
    context, which ``gateway.shapes.validation_words`` shows in the reader's language."""
    return refused_field(kind, words)


def _text_of(value: str, what: str) -> str:
    """Text without control characters (NUL, line breaks) or lone surrogates (not Unicode)."""
    for char in value:
        category = unicodedata.category(char)
        if category == "Cc":
            raise _refused(what, said("must_not_contain_control_characters_such", what=what))
        if category == "Cs":
            raise _refused(what, said("must_be_valid_unicode_text", what=what))
    return value


def checked_username(value: str) -> str:
    if len(value) > 4 * MAX_USERNAME_CHARS:  # cut short before looking at every character
        raise _refused("username", said("username_must_be_most_characters", max_username_chars=MAX_USERNAME_CHARS))
    name = _text_of(value, "username").strip()
    if not name:
        raise _refused("username", said("username_must_not_be_empty_only_2"))
    if len(name) > MAX_USERNAME_CHARS:
        raise _refused("username", said("username_must_be_most_characters", max_username_chars=MAX_USERNAME_CHARS))
    return name


def given_password(value: str) -> str:
    """A password as typed to prove who one is: only bounded (the chat service judges it)."""
    if len(value) > MAX_PASSWORD_CHARS:
        raise _refused("password", said("password_most_characters", max_password_chars=MAX_PASSWORD_CHARS))
    return value


def new_password(value: str) -> str:
    given_password(value)
    if len(value) < MIN_PASSWORD_CHARS:
        raise _refused("password", said("password_least_characters", min_password_chars=MIN_PASSWORD_CHARS))
    return value


def token_name(value: str) -> str:
    name = _text_of(value, "name").strip()
    if not name:
        raise _refused("name", said("name_must_not_be_empty_only"))
    return name


Username = Annotated[str, AfterValidator(checked_username)]
GivenPassword = Annotated[str, AfterValidator(given_password)]
NewPassword = Annotated[str, AfterValidator(new_password)]
ObjectId = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64)]
Grants = Annotated[list[ObjectId], Field(max_length=MAX_GRANTS)]
PathId = Annotated[str, Path(min_length=1, max_length=64)]
PageNumber = Annotated[int, Path(ge=1, le=MAX_PAGE)]
PageSize = Annotated[int, Path(ge=1, le=MAX_PAGE_SIZE)]


class LoginIn(BaseModel):
    username: Username
    password: GivenPassword = Field(min_length=1)


class SignInLinkIn(BaseModel):
    code: str = Field(min_length=1, max_length=200, description="the code after #signin= in the link")


class NewPasswordIn(BaseModel):
    password: NewPassword
    re_password: str = Field(max_length=MAX_PASSWORD_CHARS, description="the password again")

    @model_validator(mode="after")
    def _same(self) -> NewPasswordIn:
        if self.password != self.re_password:
            raise _refused("re_password", PASSWORDS_DIFFER)
        return self


class PasswordChangeIn(NewPasswordIn):
    current_password: GivenPassword = Field(default="", description="empty for an account that has none yet")


class PersonalTokenIn(BaseModel):
    name: Annotated[str, Field(min_length=1, max_length=MAX_TOKEN_NAME_CHARS), AfterValidator(token_name)]
    expires_at: AwareDatetime | None = Field(default=None, description="RFC 3339 with a time zone; absent = never")


class NewUserIn(BaseModel):
    username: Username
    password: NewPassword
    role: RoleName = "viewer"
    datasets: Grants = Field(default_factory=list)
    applications: Grants = Field(default_factory=list)


class UserChangeIn(BaseModel):
    """Only the fields sent change; ``datasets`` or ``applications`` sent replace that kind of grant."""

    role: RoleName | None = None
    is_active: bool | None = None
    datasets: Grants | None = None
    applications: Grants | None = None

    @model_validator(mode="after")
    def _something(self) -> UserChangeIn:
        if self.role is None and self.is_active is None and self.datasets is None and self.applications is None:
            raise _refused("change", NOTHING_TO_CHANGE)
        return self


class UserOut(Shape):
    id: str
    username: str
    role: str
    datasets: list[str]
    applications: list[str]
    is_active: bool
    create_time: str | None
    last_sign_in_time: str | None


class AccountOut(Shape):
    """Who the token names; ``permissions``: the needs met with no particular object (the table's
    names, e.g. ``dataset_create``, ``admin``)."""

    id: str
    username: str
    role: str
    datasets: list[str]
    applications: list[str]
    is_active: bool
    permissions: list[str]
    has_password: bool  # false: signed in by a one-time link, no password set yet


class UserPageOut(Shape):
    records: list[UserOut]
    total: int
    current: int
    size: int


class PersonalTokenOut(Shape):
    id: str
    name: str
    prefix: str
    create_time: str | None
    expires_at: str | None
    last_used_time: str | None
    is_active: bool


class NewPersonalTokenOut(PersonalTokenOut):
    token: str  # shown this once


class SignInLinkOut(Shape):
    code: str
    expires_at: str | None


def _when(value: str) -> str | None:
    return value or None


def _granted(user: pb.UserInfo, kind: pb.GrantKind) -> list[str]:
    return [grant.object_id for grant in user.grants if grant.kind == kind]


def user_json(user: pb.UserInfo) -> dict[str, object]:
    return {
        "id": user.id,
        "username": user.username,
        "role": ROLE_NAMES.get(user.role, ""),
        "datasets": _granted(user, pb.GRANT_KIND_DATASET),
        "applications": _granted(user, pb.GRANT_KIND_APPLICATION),
        "is_active": user.is_active,
        "create_time": _when(user.created_at),
        "last_sign_in_time": _when(user.last_sign_in_at),
    }


def token_json(info: pb.PersonalTokenInfo) -> dict[str, object]:
    return {
        "id": info.id,
        "name": info.name,
        "prefix": info.prefix,
        "create_time": _when(info.created_at),
        "expires_at": _when(info.expires_at),
        "last_used_time": _when(info.last_used_at),
        "is_active": info.is_active,
    }


def grants_of(datasets: list[str], applications: list[str]) -> list[pb.Grant]:
    return [pb.Grant(kind=pb.GRANT_KIND_DATASET, object_id=d) for d in dict.fromkeys(datasets)] + [
        pb.Grant(kind=pb.GRANT_KIND_APPLICATION, object_id=a) for a in dict.fromkeys(applications)
    ]


def client_address(request: Request) -> str:
    """The client's address as uvicorn determined it (``KB_TRUSTED_PROXIES`` applied)."""
    return request.client.host if request.client else ""


# --- signing in and out ---------------------------------------------------------------------


@router.post("/user/login", dependencies=[Depends(signin_admitted)], response_model=Envelope[str])
async def login(body: LoginIn, request: Request, backend: AnonymousBackend) -> JSONResponse:
    """``data`` is the session's bearer token (MaxKB's shape): send it as ``Authorization: Bearer``."""
    reply = await backend.unary(
        backend.chat.users.SignIn,
        pb.SignInRequest(username=body.username, password=body.password, client_address=client_address(request)),
    )
    return ok(reply.token)


@router.post("/user/signin_link", dependencies=[Depends(link_admitted)], response_model=Envelope[str])
async def redeem_signin_link(body: SignInLinkIn, request: Request, backend: AnonymousBackend) -> JSONResponse:
    """A one-time sign-in link's code for a session token; the link is used up."""
    reply = await backend.unary(
        backend.chat.users.RedeemSignInLink,
        pb.RedeemSignInLinkRequest(code=body.code, client_address=client_address(request)),
    )
    return ok(reply.token)


@router.post("/user/logout", response_model=Envelope[bool])
async def logout(backend: CallerBackend) -> JSONResponse:
    """Ends the session presented (a personal token is revoked with ``DELETE /api/user/token/{id}``)."""
    await backend.unary(backend.chat.users.SignOut, pb.SignOutRequest())
    return ok(True)


# --- one's own account ----------------------------------------------------------------------


def _permissions(principal: Principal) -> list[str]:
    return [need.value for need in Need if need is not Need.PUBLIC and allows(principal, need)]


@router.get("/user", response_model=Envelope[AccountOut])
async def account(request: Request) -> JSONResponse:
    """The account the token names, as the permission check resolved it (no further call). The
    break-glass operator token is ``operator``, with no id."""
    principal = current_principal(request)
    who = who_of(request)
    if principal is None or (principal.kind is not Kind.OPERATOR and who is None):
        raise ApiError(401, said("these_credentials_name_no_account"))
    data: dict[str, object] = {
        "id": "",
        "username": "operator",
        "role": "operator",
        "datasets": [],
        "applications": [],
        "is_active": True,
        "has_password": False,
    }
    if principal.kind is not Kind.OPERATOR and who is not None:
        data = {key: value for key, value in user_json(who.user).items() if key in AccountOut.model_fields}
        data["has_password"] = who.user.has_password
    return ok({**data, "permissions": _permissions(principal)})


@router.put("/user/re_password", response_model=Envelope[bool])
async def change_password(body: PasswordChangeIn, backend: CallerBackend) -> JSONResponse:
    """A new password; the person's other sessions end."""
    await backend.unary(
        backend.chat.users.ChangePassword,
        pb.ChangePasswordRequest(current_password=body.current_password, new_password=body.password),
    )
    return ok(True)


@router.get("/user/token", response_model=Envelope[list[PersonalTokenOut]])
async def list_tokens(backend: CallerBackend) -> JSONResponse:
    reply = await backend.unary(backend.chat.users.ListPersonalTokens, pb.ListPersonalTokensRequest())
    return ok([token_json(t) for t in reply.tokens])


@router.post("/user/token", response_model=Envelope[NewPersonalTokenOut])
async def create_token(body: PersonalTokenIn, backend: CallerBackend) -> JSONResponse:
    """A personal token for scripts and the CLI: ``token`` is shown this once."""
    expires = body.expires_at.isoformat() if body.expires_at else ""
    reply = await backend.unary(
        backend.chat.users.CreatePersonalToken, pb.CreatePersonalTokenRequest(name=body.name, expires_at=expires)
    )
    return ok({**token_json(reply.info), "token": reply.token})


@router.delete("/user/token/{token_id}", response_model=Envelope[bool])
async def revoke_token(token_id: PathId, backend: CallerBackend) -> JSONResponse:
    await backend.unary(backend.chat.users.RevokePersonalToken, pb.RevokePersonalTokenRequest(token_id=token_id))
    return ok(True)


# --- user management (administrators) -------------------------------------------------------


async def _users(backend: Backend) -> list[pb.UserInfo]:
    reply = await backend.unary(backend.chat.users.ListUsers, pb.ListUsersRequest())
    return list(reply.users)


@router.get("/user_manage", response_model=Envelope[list[UserOut]])
async def list_users(backend: CallerBackend) -> JSONResponse:
    return ok([user_json(u) for u in await _users(backend)])


@router.get("/user_manage/{current_page}/{page_size}", response_model=Envelope[UserPageOut])
async def user_page(current_page: PageNumber, page_size: PageSize, backend: CallerBackend) -> JSONResponse:
    users = await _users(backend)
    start = (current_page - 1) * page_size
    records = [user_json(u) for u in users[start : start + page_size]]
    return ok({"records": records, "total": len(users), "current": current_page, "size": page_size})


@router.post("/user_manage", response_model=Envelope[UserOut])
async def create_user(body: NewUserIn, backend: CallerBackend) -> JSONResponse:
    request = pb.CreateUserRequest(
        username=body.username,
        password=body.password,
        role=ROLES[body.role],
        grants=grants_of(body.datasets, body.applications),
    )
    return ok(user_json(await backend.unary(backend.chat.users.CreateUser, request)))


async def _grants_after(backend: Backend, user_id: str, body: UserChangeIn) -> list[pb.Grant] | None:
    """The grants the change leaves (None: unchanged). One kind sent keeps the other as it is."""
    if body.datasets is None and body.applications is None:
        return None
    datasets, applications = body.datasets, body.applications
    if datasets is None or applications is None:
        user = next((u for u in await _users(backend) if u.id == user_id), None)
        if user is None:
            raise ApiError(404, NO_USER)
        datasets = _granted(user, pb.GRANT_KIND_DATASET) if datasets is None else datasets
        applications = _granted(user, pb.GRANT_KIND_APPLICATION) if applications is None else applications
    return grants_of(datasets, applications)


@router.put("/user_manage/{user_id}", response_model=Envelope[UserOut])
async def update_user(user_id: PathId, body: UserChangeIn, backend: CallerBackend) -> JSONResponse:
    """Role, active switch and grants, in one transaction; deactivating ends the person's sessions.
    Demoting or deactivating the last active administrator is refused (409)."""
    change = pb.UpdateUserRequest(user_id=user_id)
    if body.role is not None:
        change.role = ROLES[body.role]
    if body.is_active is not None:
        change.is_active = body.is_active
    grants = await _grants_after(backend, user_id, body)
    if grants is not None:
        change.replace_grants = True
        change.grants.extend(grants)
    return ok(user_json(await backend.unary(backend.chat.users.UpdateUser, change)))


@router.delete("/user_manage/{user_id}", response_model=Envelope[bool])
async def delete_user(user_id: PathId, backend: CallerBackend) -> JSONResponse:
    """The person's sessions and tokens end; the last active administrator is not deleted (409)."""
    await backend.unary(backend.chat.users.DeleteUser, pb.DeleteUserRequest(user_id=user_id))
    return ok(True)


@router.put("/user_manage/{user_id}/re_password", response_model=Envelope[bool])
async def reset_password(user_id: PathId, body: NewPasswordIn, backend: CallerBackend) -> JSONResponse:
    """An administrator sets a person's password; their sessions end."""
    await backend.unary(backend.chat.users.UpdateUser, pb.UpdateUserRequest(user_id=user_id, password=body.password))
    return ok(True)


@router.post("/user_manage/{user_id}/signin_link", response_model=Envelope[SignInLinkOut])
async def create_signin_link(user_id: PathId, backend: CallerBackend) -> JSONResponse:
    """A one-time sign-in code for the person (the page's link is ``/ui/admin#signin=<code>``)."""
    reply = await backend.unary(backend.chat.users.CreateSignInLink, pb.CreateSignInLinkRequest(user_id=user_id))
    return ok({"code": reply.code, "expires_at": _when(reply.expires_at)})
