import FerryKit
import Foundation
import Hummingbird

/// The request context of the daemon's router: Ferry's JSON encoding (ISO 8601 dates, sorted
/// keys) for requests and responses.
package struct FerryRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    /// How the request was let in (``TokenAuthMiddleware``): what it may do depends on it.
    package var credential: Credential?
    /// The request's Origin when a browser extension sent it (``LoopbackGuardMiddleware``):
    /// only the paired extension's token may answer for it (``TokenAuthMiddleware``).
    package var extensionOrigin: String?
    /// The peer's IP address (the sync listener slows down failed logins per address).
    package let remoteAddress: String?

    /// The API token may do everything; the web app's login may not set hooks (commands run by
    /// the daemon, data sent elsewhere); the browser extension's token may only create and read
    /// transfers (``ExtensionAccess``).
    package enum Credential: Sendable {
        case token
        case webSession
        case browserExtension
    }

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress?.ipAddress
    }

    package var requestDecoder: JSONDecoder { FerryJSON.decoder() }
    package var responseEncoder: JSONEncoder { FerryJSON.encoder() }
}
