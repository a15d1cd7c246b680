import FerryKit
import FerryListening
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
    /// The peer's IP address (the sync listener slows down failed logins per address); behind a
    /// trusted proxy, the client's (``RemoteGuardMiddleware``).
    package var remoteAddress: String?
    /// Set on a listener beyond loopback (``RemoteGuardMiddleware``): the daemon's token and this
    /// machine's login link do not count there, only accounts.
    package var remote: RemoteRequest?

    /// How a request reached a listener beyond loopback.
    package struct RemoteRequest: Sendable, Hashable {
        /// Over HTTPS (the listener's TLS, or a trusted proxy's `X-Forwarded-Proto: https`):
        /// cookies are `Secure`.
        package var secure: Bool
    }

    /// The API token may do everything; the web app's login may not set hooks (commands run by
    /// the daemon, data sent elsewhere); the browser extension's token may only create and read
    /// transfers (``ExtensionAccess``); an account may do what its role allows (``MemberAccess``).
    package enum Credential: Sendable, Hashable {
        /// The daemon's API token (the state folder's): everything.
        case token
        /// The web app on this machine, logged in by the link `ferry open` prints: an admin.
        case webSession
        case browserExtension
        /// A user's password login (the web app elsewhere) or API token (`ferry user token`).
        case account(AccountIdentity)

        /// May manage users and change the daemon's settings (not hooks: the token alone).
        package var isAdmin: Bool {
            switch self {
            case .token, .webSession: true
            case .account(let identity): identity.role == .admin
            case .browserExtension: false
            }
        }

        /// A member's login or token: their own transfers and account only.
        package var isMember: Bool {
            if case .account(let identity) = self { identity.role == .member } else { false }
        }

        /// The account's name, for an account.
        package var user: String? {
            if case .account(let identity) = self { identity.user } else { nil }
        }
    }

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress?.ipAddress
    }

    /// Whose subscriptions, places and Up Next the request reads and changes: the account's, else
    /// the machine's owner's (the daemon's token, the login link, the extension).
    package var listener: String { credential?.user ?? Listener.owner }

    package var requestDecoder: JSONDecoder { FerryJSON.decoder() }
    package var responseEncoder: JSONEncoder { FerryJSON.encoder() }
}
