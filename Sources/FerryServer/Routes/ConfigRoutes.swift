import FerryCore
import FerryKit
import Hummingbird

/// `/v1/sessions/{session}/config` and `/v1/config` (the daemon's): transfer options, read with
/// sensitive header values redacted, changed with a PATCH of fields to set and to clear.
struct ConfigRoutes {
    let engine: TransferEngine
    /// False: this daemon runs no hooks (`ferry serve --no-hooks`), so none may be set.
    var hooksEnabled = true

    func register(on api: RouterGroup<FerryRequestContext>) {
        api.get("sessions/:session/config") { _, context in
            let session = try context.parameters.require("session")
            return try jsonResponse(SessionConfiguration(session: session, options: try await engine.options(session: session).redacted))
        }
        api.patch("sessions/:session/config") { request, context in
            let session = try context.parameters.require("session")
            let update = try await request.decodeJSON(TransferOptionsUpdate.self, context: context)
            try Self.checkHooks(update, context, enabled: hooksEnabled)
            let options = try await engine.updateOptions(session: session, update)
            return try jsonResponse(SessionConfiguration(session: session, options: options.redacted))
        }
        api.get("config") { _, _ in
            try jsonResponse(try await engine.options(session: nil).redacted)
        }
        api.patch("config") { request, context in
            let update = try await request.decodeJSON(TransferOptionsUpdate.self, context: context)
            try Self.checkHooks(update, context, enabled: hooksEnabled)
            return try jsonResponse(try await engine.updateOptions(session: nil, update).redacted)
        }
    }

    /// Hooks run commands and send data elsewhere: the web app's login may neither set nor clear
    /// them, only the API token (the CLI, a program).
    static func checkHooks(_ update: TransferOptionsUpdate, _ context: FerryRequestContext, enabled: Bool = true) throws {
        if !enabled, update.set?.setsHooks == true {
            throw FerryError(.forbidden, "This daemon runs no hooks (ferry serve --no-hooks).")
        }
        let touches = update.set?.setsHooks == true || !(update.clear ?? []).filter(TransferOptions.hookFields.contains).isEmpty
        guard touches, context.credential != .token else { return }
        throw FerryError(.forbidden, "Hooks (onComplete, onFail, notifyURL, launch) are set with the CLI or the API token, not from the web app.")
    }
}
