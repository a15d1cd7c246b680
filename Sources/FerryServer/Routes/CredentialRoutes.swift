import FerryCore
import FerryKit
import Foundation
import Hummingbird

/// `/v1/credentials`: the credential store (`ferry credentials`), one login per host, answered
/// when that host asks who the user is. An admin's only (the daemon's token included): a login
/// kept here is used for every transfer to its host. Passwords go in and never come out.
struct CredentialRoutes {
    let engine: TransferEngine

    func register(on api: RouterGroup<FerryRequestContext>) {
        api.get("credentials") { _, context in
            try Self.requireAdmin(context)
            return try jsonResponse(HostCredentialList(credentials: try await engine.journal.storedCredentials().map(\.shown)))
        }
        api.post("credentials") { request, context in
            try Self.requireAdmin(context)
            let body = try await request.decodeJSON(HostCredentialRequest.self, context: context)
            let host = try HostCredential.normalizedHost(body.host)
            try TransferOptions(user: body.user, password: body.password).validate()
            let credential = StoredCredential(host: host, user: body.user, password: body.password)
            try await engine.journal.saveCredential(credential)
            return try jsonResponse(credential.shown, status: .created)
        }
        api.delete("credentials/:host") { _, context in
            try Self.requireAdmin(context)
            let host = try HostCredential.normalizedHost(try context.parameters.require("host"))
            guard try await engine.journal.removeCredential(host: host) else {
                throw FerryError(.notFound, "No login is kept for \(host); 'ferry credentials ls' lists them.")
            }
            return Response(status: .noContent)
        }
    }

    static func requireAdmin(_ context: FerryRequestContext) throws {
        guard context.credential?.isAdmin == true else { throw FerryError(.forbidden, "Only an admin keeps or reads the hosts' logins.") }
    }
}
