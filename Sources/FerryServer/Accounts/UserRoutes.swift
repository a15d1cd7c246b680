import FerryCore
import FerryKit
import FerryListening
import Foundation
import HTTPTypes
import Hummingbird

/// Accounts over the API: the password login (`/v1/session`), who is signed in (`/v1/me`), and
/// `/v1/users` (an admin's: add, list, change and remove users; a member's: their own password,
/// sessions and tokens, as ``MemberAccess`` lets through).
struct UserRoutes {
    let accounts: AccountLibrary
    let login: AccountLogin
    /// Sync logins remember passwords that passed: told when one changes.
    let syncAuth: SyncAuthenticator

    /// The login itself needs no credential.
    func registerPublic(on router: Router<FerryRequestContext>) {
        router.post("v1/session") { request, context in
            let body = try await request.decodeJSON(LoginRequest.self, context: context)
            let secret = try await login.logIn(body, userAgent: request.headers[.userAgent], address: context.remoteAddress)
            return Response(status: .noContent, headers: [.setCookie: AccountLogin.cookie(secret, secure: context.remote?.secure ?? false)])
        }
    }

    func register(on api: RouterGroup<FerryRequestContext>) {
        api.get("me") { _, context in try jsonResponse(Self.signedIn(context.credential)) }
        api.delete("session") { request, context in
            if let secret = WebLogin.cookie(AccountLogin.cookieName, in: request.headers[.cookie]) { try await accounts.endSession(secret: secret) }
            return Response(status: .noContent, headers: [.setCookie: AccountLogin.clearedCookie(secure: context.remote?.secure ?? false)])
        }
        api.get("users") { _, context in
            try Self.requireAdmin(context)
            return try jsonResponse(AccountList(users: try await accounts.list()))
        }
        api.post("users") { request, context in
            try Self.requireAdmin(context)
            let body = try await request.decodeJSON(CreateAccountRequest.self, context: context)
            return try jsonResponse(try await accounts.add(body.name, password: body.password, role: body.role ?? .member), status: .created)
        }
        api.get("users/:name") { _, context in try jsonResponse(try await accounts.account(try Self.name(context))) }
        api.patch("users/:name") { request, context in
            let name = try Self.name(context)
            let body = try await request.decodeJSON(UpdateAccountRequest.self, context: context)
            try await checkUpdate(body, of: name, context)
            let keeping = context.credential.flatMap { if case .account(let identity) = $0, identity.user == name { identity.hash } else { nil } }
            let account = try await accounts.update(name, password: body.password, role: body.role, keeping: keeping)
            if body.password != nil { await syncAuth.forgetAll() }
            return try jsonResponse(account)
        }
        api.delete("users/:name") { _, context in
            try Self.requireAdmin(context)
            try await accounts.remove(try Self.name(context))
            await syncAuth.forgetAll()
            return Response(status: .noContent)
        }
        registerCredentials(on: api)
    }

    /// A user's sessions and tokens.
    private func registerCredentials(on api: RouterGroup<FerryRequestContext>) {
        for kind in [AccountCredentialRecord.Kind.session, .token] {
            let path = "users/:name/\(kind.rawValue)s"
            api.get(RouterPath(path)) { _, context in
                let current = context.credential.flatMap { if case .account(let identity) = $0 { identity.hash } else { nil } }
                return try jsonResponse(AccountCredentialList(credentials: try await accounts.credentials(of: try Self.name(context), kind: kind, current: current)))
            }
            // Sign out everywhere: every session but the one asking.
            api.delete(RouterPath(path)) { _, context in
                let keeping = context.credential.flatMap { if case .account(let identity) = $0 { identity.hash } else { nil } }
                try await accounts.end(kind, of: try Self.name(context), keeping: keeping)
                // A token may be a sync app's password (Nextcloud's login flow), remembered there.
                await syncAuth.forgetAll()
                return Response(status: .noContent)
            }
            api.delete(RouterPath(path + "/:id")) { _, context in
                try await accounts.end(kind, of: try Self.name(context), id: try context.parameters.require("id"))
                await syncAuth.forgetAll()
                return Response(status: .noContent)
            }
        }
        api.post("users/:name/tokens") { request, context in
            let body = try await request.decodeJSON(CreateAccountTokenRequest.self, context: context)
            return try jsonResponse(try await accounts.makeToken(for: try Self.name(context), label: body.label), status: .created)
        }
    }

    /// An admin may change anyone's password and role (not their own role: another admin must);
    /// a member only their own password, giving the current one.
    private func checkUpdate(_ body: UpdateAccountRequest, of name: String, _ context: FerryRequestContext) async throws {
        guard let credential = context.credential else { throw FerryError(.unauthorized, "Log in first.") }
        if credential.isAdmin {
            if body.role != nil, credential.user == name {
                throw FerryError(.forbidden, "An admin's own role is changed by another admin (or with the ferry command on the server).")
            }
            return
        }
        guard body.role == nil else { throw FerryError(.forbidden, "Only an admin changes roles.") }
        guard let current = body.currentPassword, await accounts.verify(name, password: current) != nil else {
            throw FerryError(.forbidden, "Give your current password to set a new one.")
        }
    }

    static func requireAdmin(_ context: FerryRequestContext) throws {
        guard context.credential?.isAdmin == true else { throw FerryError(.forbidden, "Only an admin manages users.") }
    }

    /// The path's user name, which a member may only use for themselves (``MemberAccess`` has
    /// checked; this says it again where the name is read).
    static func name(_ context: FerryRequestContext) throws -> String {
        let name = try context.parameters.require("name")
        if let credential = context.credential, !credential.isAdmin, credential.user != name {
            throw FerryError(.forbidden, "A member manages only their own account.")
        }
        return name
    }

    static func signedIn(_ credential: FerryRequestContext.Credential?) -> SignedIn {
        switch credential {
        case .account(let identity): SignedIn(user: identity.user, role: identity.role, via: identity.kind == .session ? "session" : "accountToken")
        case .webSession: SignedIn(user: nil, role: .admin, via: "web")
        default: SignedIn(user: nil, role: .admin, via: "token")
        }
    }
}
