import FerryCore
import FerryKit
import FerryListening
import Foundation
import Hummingbird

/// `/v1/sync/users`: the users phones sync as (`ferry sync user add`). They can log in from
/// the network, so only an admin adds or removes them. They are accounts (``UserRoutes``).
struct SyncUserRoutes {
    let sync: SyncLibrary
    let auth: SyncAuthenticator
    let address: DaemonAddress

    func register(on api: RouterGroup<FerryRequestContext>) {
        api.get("sync/users") { _, _ in
            try jsonResponse(SyncUserList(users: try await sync.users(), url: address.url))
        }
        api.post("sync/users") { request, context in
            try Self.checkToken(context)
            let body = try await request.decodeJSON(SyncUserRequest.self, context: context)
            let created = try await sync.setUser(body.name, password: body.password)
            await auth.forgetAll()
            let user = try await sync.users().first { $0.name == body.name }
            return try jsonResponse(user, status: created ? .created : .ok)
        }
        api.delete("sync/users/:name") { _, context in
            try Self.checkToken(context)
            try await sync.removeUser(try context.parameters.require("name"))
            await auth.forgetAll()
            return Response(status: .noContent)
        }
    }

    static func checkToken(_ context: FerryRequestContext) throws {
        guard context.credential?.isAdmin == true else {
            throw FerryError(.forbidden, "Sync users are accounts: only an admin adds or removes them.")
        }
    }
}
