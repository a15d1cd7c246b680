import FerryKit
import Foundation
import Hummingbird

/// `/v1/extension…`: pairing the browser extension. The code is the credential of
/// `POST /v1/extension/pair`; the rest is for the API token only (the CLI: `ferry extension
/// pair`, `status`, `revoke`), not for the web app's login nor the extension itself.
struct ExtensionRoutes {
    let pairing: ExtensionPairing
    let address: DaemonAddress

    /// Outside the token check: the pairing code is the credential.
    func registerPublic(on router: Router<FerryRequestContext>) {
        router.post("v1/extension/pair") { request, context in
            let body = try await request.decodeJSON(ExtensionPairRequest.self, context: context)
            return try jsonResponse(try pairing.pair(code: body.code, origin: context.extensionOrigin), status: .created)
        }
    }

    func registerAPI(on api: RouterGroup<FerryRequestContext>) {
        api.post("extension/pairing-codes") { _, context in
            try Self.checkToken(context)
            let code = ExtensionPairingCode(code: pairing.makeCode(), expiresInSeconds: Int(ExtensionPairing.codeLifetime), daemonURL: address.url ?? "")
            return try jsonResponse(code, status: .created)
        }
        api.get("extension") { _, context in
            try Self.checkToken(context)
            return try jsonResponse(pairing.status)
        }
        api.delete("extension") { _, context in
            try Self.checkToken(context)
            return try jsonResponse(try pairing.revoke())
        }
    }

    static func checkToken(_ context: FerryRequestContext) throws {
        guard context.credential == .token else {
            throw FerryError(.forbidden, "Only the API token (the ferry command) pairs a browser extension, shows or revokes its pairing.")
        }
    }
}
