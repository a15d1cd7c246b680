import FerryKit
import Foundation
import Hummingbird

/// `GET` and `PUT /v1/listener-settings` (an admin's): the listeners beyond loopback, aria2's
/// RPC and the sync API as the daemon's next start reads them (``ListenerSettingFiles``), and
/// where they answer now. Saving changes nothing that runs: the listeners are bound at start.
struct ListenerSettingsRoutes {
    let files: ListenerSettingFiles
    let remote: RemoteListeners?
    let aria2Address: DaemonAddress
    let syncAddress: DaemonAddress

    func register(on api: RouterGroup<FerryRequestContext>) {
        api.get("listener-settings") { _, context in
            try Self.requireAdmin(context)
            return try jsonResponse(try status())
        }
        api.put("listener-settings") { request, context in
            try Self.requireAdmin(context)
            let settings = try await request.decodeJSON(ListenerSettings.self, context: context)
            try files.write(settings)
            return try jsonResponse(try status())
        }
    }

    private func status() throws -> ListenerSettingsStatus {
        let saved = try files.read()
        let aria2URL = aria2Address.url
        let secret = saved.aria2Port != nil || aria2URL != nil ? try? String(contentsOf: files.paths.aria2Secret, encoding: .utf8) : nil
        return ListenerSettingsStatus(
            saved: saved, remoteURLs: remote?.status().urls ?? [], aria2URL: aria2URL, syncURL: syncAddress.url,
            aria2Secret: secret?.trimmingCharacters(in: .whitespacesAndNewlines)
        )
    }

    /// The listeners open the daemon to the network: only an admin's login or the API token.
    static func requireAdmin(_ context: FerryRequestContext) throws {
        guard context.credential?.isAdmin == true else { throw FerryError(.forbidden, "Only an admin changes where Ferry listens.") }
    }
}
