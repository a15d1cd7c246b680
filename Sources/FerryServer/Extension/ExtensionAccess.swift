import FerryKit
import HTTPTypes

/// What the browser extension's token may do: create and read transfers, and read the daemon's
/// status. Everything else is refused (403), so a route added later is closed to it until it is
/// named here. Pure: a method, a path and a request body in, a verdict out.
enum ExtensionAccess {
    /// True when the extension's token may make this request.
    /// - Parameter path: the request's path without its query (`/v1/transfers/12`).
    static func allows(_ method: HTTPRequest.Method, path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard parts.first == "v1" else { return false }
        switch (method, Array(parts.dropFirst())) {
        case (.get, ["status"]), (.get, ["transfers"]), (.post, ["transfers"]): return true
        case (.get, let rest) where rest.count == 2 && rest[0] == "transfers": return Int64(rest[1]).map { $0 > 0 } ?? false
        default: return false
        }
    }

    /// The message of the 403 for anything else.
    static let refusal = "The browser extension's token may only create and read transfers (POST and GET /v1/transfers, GET /v1/transfers/{id}) and read /v1/status; use the CLI or the web app for the rest."

    /// A transfer the extension asks for goes where the user's downloads go (the session's folder
    /// or the library's Downloads/) under a fresh name: never into a folder it names, over a file,
    /// or with hooks. A token kept by a browser must not become a way to write any file the daemon
    /// may write.
    static func checkCreate(_ body: CreateTransfersRequest, by who: String = "The browser extension") throws(FerryError) {
        var refused: [String] = []
        if body.directory != nil { refused.append("directory") }
        if body.createDirectory != nil { refused.append("createDirectory") }
        if body.overwrite == true { refused.append("overwrite") }
        if body.resumeData != nil { refused.append("resumeData") }
        if body.options?.directory != nil { refused.append("options.directory") }
        // Files of the server read as certificates: the owner's to name, not a browser's or a member's.
        if body.options?.caCertificate != nil { refused.append("options.caCertificate") }
        if body.options?.caDirectory != nil { refused.append("options.caDirectory") }
        // The user's client certificate is theirs to present; an unchecked certificate is theirs to accept.
        if body.options?.clientCertificate != nil || body.options?.clientKey != nil { refused.append("options.clientCertificate") }
        if body.options?.insecure != nil { refused.append("options.insecure") }
        // A .netrc is a file of the server's, with its owner's passwords.
        if body.options?.netrcFile != nil { refused.append("options.netrcFile") }
        if body.options?.setsHooks == true || body.options?.desktopNotify != nil { refused.append("hooks") }
        guard refused.isEmpty else {
            throw FerryError(
                .forbidden,
                "\(who) may not set \(refused.joined(separator: ", ")): its downloads go to the session's folder under a name of their own."
            )
        }
    }

    /// `chrome-extension://…`, `moz-extension://…`, `safari-web-extension://…`: a browser
    /// extension's page or service worker.
    static func isExtensionOrigin(_ origin: String) -> Bool {
        guard let end = origin.range(of: "://") else { return false }
        return origin[..<end.lowerBound].lowercased().hasSuffix("-extension")
    }
}
