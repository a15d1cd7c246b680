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
        // A session's cookie jar: listed with values redacted; imported from a cookies.txt;
        // exported (values and all) to the API token only; cleared.
        api.get("sessions/:session/cookies") { _, context in
            let session = try context.parameters.require("session")
            return try jsonResponse(CookieList(session: session, cookies: try await engine.cookies(session: session).map(\.redacted)))
        }
        api.get("sessions/:session/cookies.txt") { _, context in
            guard context.credential == .token else {
                throw FerryError(.forbidden, "Cookies are exported with the CLI or the API token (`ferry session cookies export`), not from the web app.")
            }
            let text = CookiesFile.text(try await engine.cookies(session: try context.parameters.require("session")))
            return Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: text)))
        }
        api.post("sessions/:session/cookies") { request, context in
            let session = try context.parameters.require("session")
            let body = try await request.body.collect(upTo: 4 << 20)
            let cookies = try CookiesFile.parse(String(buffer: body))
            let jar = try await engine.importCookies(cookies, session: session)
            return try jsonResponse(CookieJarChange(session: session, imported: cookies.count, cookies: jar.map(\.redacted)))
        }
        api.post("sessions/:session/login") { request, context in
            let session = try context.parameters.require("session")
            let body = try await request.decodeJSON(SessionLoginRequest.self, context: context)
            let url = try TransferURL.validate(body.url)
            guard body.form.count <= 64 else { throw FerryError.invalidRequest("A login form has at most 64 fields.") }
            return try jsonResponse(try await engine.logIn(session: session, url: url, form: body.form.map { ($0.name, $0.value) }))
        }
        api.delete("sessions/:session/cookies") { _, context in
            let session = try context.parameters.require("session")
            return try jsonResponse(CookieJarChange(session: session, cleared: try await engine.clearCookies(session: session), cookies: []))
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
