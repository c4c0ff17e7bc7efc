"""UserService: signing in and out, one's own password and personal tokens, and the
administrator's user management. Who may call each RPC is the permission table's
(``kbcore.permissions.table``), checked before the method runs; the methods here act on the
caller's own account, or, for the *User RPCs, on the account the request names.

No password or token is ever logged or put into an error message.
"""

from __future__ import annotations

from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from grpc_stubs.chat.v1 import chat_service_pb2_grpc as pb_grpc
from kbcore.db.audit import current_actor
from kbcore.errors import InvalidRequest, PermissionDenied
from kbcore.rpc.error_mapping import Context, unary_errors
from kbcore.words.said import said
from services.chat.accounts.account_audit import from_address
from services.chat.accounts.passwords import checked_password, checked_username, hash_password
from services.chat.accounts.personal_tokens import PersonalTokens
from services.chat.accounts.signin import SignedIn, SignIn
from services.chat.accounts.user_messages import grants_of, role_of, timestamp, token_info, user_info
from services.chat.accounts.user_store import UserChange, UserStore
from services.chat.accounts.user_tokens import SESSION, UserTokens
from services.chat.callers.chat_caller import Caller, CallerKind, current_caller
from services.chat.callers.credential_expiry import parse_expiry

NO_ACCOUNT = said("break_glass_operator_token_belongs_no")
NOT_A_SESSION = said("call_presents_personal_token_not_session")


def own_account(caller: Caller) -> str:
    """The caller's user id; refused for the operator token, which has no account."""
    if caller.kind is not CallerKind.USER or not caller.user_id:
        raise PermissionDenied(NO_ACCOUNT)
    return caller.user_id


def signed_in(result: SignedIn) -> pb.SignInResponse:
    return pb.SignInResponse(
        token=result.session.token, user=user_info(result.user), expires_at=timestamp(result.session.expires_at)
    )


class UserRpcs(pb_grpc.UserServiceServicer):
    def __init__(self, users: UserStore, tokens: UserTokens, sign_in: SignIn, personal: PersonalTokens) -> None:
        self._users = users
        self._tokens = tokens
        self._sign_in = sign_in
        self._personal = personal

    @unary_errors
    async def SignIn(self, request: pb.SignInRequest, context: Context) -> pb.SignInResponse:
        with from_address(request.client_address):  # the address the audit row and the throttle count
            result = await self._sign_in.with_password(request.username, request.password, current_actor().address)
        return signed_in(result)

    @unary_errors
    async def RedeemSignInLink(self, request: pb.RedeemSignInLinkRequest, context: Context) -> pb.SignInResponse:
        with from_address(request.client_address):
            return signed_in(await self._sign_in.with_link(request.code))

    @unary_errors
    async def SignOut(self, request: pb.SignOutRequest, context: Context) -> pb.SignOutResponse:
        caller = current_caller()
        own_account(caller)
        if caller.token_kind != SESSION:
            raise InvalidRequest(NOT_A_SESSION)
        await self._tokens.end_session(caller.token_id)
        return pb.SignOutResponse()

    @unary_errors
    async def ChangePassword(self, request: pb.ChangePasswordRequest, context: Context) -> pb.ChangePasswordResponse:
        caller = current_caller()
        user_id = own_account(caller)
        keep = caller.token_id if caller.token_kind == SESSION else ""
        await self._sign_in.change_password(user_id, keep, request.current_password, request.new_password)
        return pb.ChangePasswordResponse()

    @unary_errors
    async def CreatePersonalToken(
        self, request: pb.CreatePersonalTokenRequest, context: Context
    ) -> pb.CreatePersonalTokenResponse:
        user_id = own_account(current_caller())
        row, token = await self._personal.create(user_id, request.name, parse_expiry(request.expires_at))
        return pb.CreatePersonalTokenResponse(info=token_info(row), token=token)

    @unary_errors
    async def ListPersonalTokens(
        self, request: pb.ListPersonalTokensRequest, context: Context
    ) -> pb.ListPersonalTokensResponse:
        user_id = own_account(current_caller())
        return pb.ListPersonalTokensResponse(tokens=[token_info(r) for r in await self._personal.listed(user_id)])

    @unary_errors
    async def RevokePersonalToken(
        self, request: pb.RevokePersonalTokenRequest, context: Context
    ) -> pb.RevokePersonalTokenResponse:
        await self._personal.revoke(own_account(current_caller()), request.token_id.strip())
        return pb.RevokePersonalTokenResponse()

    @unary_errors
    async def CreateUser(self, request: pb.CreateUserRequest, context: Context) -> pb.UserInfo:
        username = checked_username(request.username)
        role = role_of(request.role)
        grants = grants_of(request.grants)
        # No password: the user signs in with a link (CreateSignInLink) and then sets one.
        password_hash = await hash_password(request.password) if request.password else ""
        return user_info(await self._users.create(username, password_hash, role, grants))

    @unary_errors
    async def ListUsers(self, request: pb.ListUsersRequest, context: Context) -> pb.ListUsersResponse:
        return pb.ListUsersResponse(users=[user_info(view) for view in await self._users.listed()])

    @unary_errors
    async def UpdateUser(self, request: pb.UpdateUserRequest, context: Context) -> pb.UserInfo:
        if not request.replace_grants and request.grants:
            raise InvalidRequest(said("grants_are_given_without_replace_grants"))
        password = checked_password(request.password) if request.HasField("password") else None
        change = UserChange(
            role=role_of(request.role) if request.HasField("role") else None,
            grants=grants_of(request.grants) if request.replace_grants else None,
            is_active=request.is_active if request.HasField("is_active") else None,
            password_hash=await hash_password(password) if password is not None else None,
        )
        return user_info(await self._users.update(request.user_id.strip(), change))

    @unary_errors
    async def DeleteUser(self, request: pb.DeleteUserRequest, context: Context) -> pb.DeleteUserResponse:
        await self._users.delete(request.user_id.strip())
        return pb.DeleteUserResponse()

    @unary_errors
    async def CreateSignInLink(
        self, request: pb.CreateSignInLinkRequest, context: Context
    ) -> pb.CreateSignInLinkResponse:
        code, expires_at = await self._users.sign_in_link(request.user_id.strip())
        return pb.CreateSignInLinkResponse(code=code, expires_at=timestamp(expires_at))
