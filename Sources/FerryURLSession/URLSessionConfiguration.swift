import FerryKit

/// What a session does and keeps, as Apple's `URLSessionConfiguration` says it. A session copies
/// its configuration when it is made: changing this object afterwards changes nothing.
///
/// Three kinds, as on Apple's platforms:
/// - ``default``: tasks run in this process; cookies in `HTTPCookieStorage.shared`, responses in
///   `URLCache.shared`.
/// - ``ephemeral``: tasks run in this process and nothing is kept after the session: cookies and
///   cache in memory only (its `httpCookieStorage` is nil: swift-corelibs-foundation offers no
///   storage that is not written to disk, so the session holds its cookies itself), and no
///   download's temporary file outlives its delegate call.
/// - ``background(withIdentifier:)``: the Ferry daemon runs the download and upload tasks, so
///   they go on after the program exits; the next run makes a session with the same identifier
///   and its delegate hears what happened meanwhile.
open class URLSessionConfiguration: NSObject, NSCopying, @unchecked Sendable {
    enum Kind: Equatable {
        case `default`, ephemeral, background
    }

    let kind: Kind

    /// The background session's identifier; nil for the others.
    open private(set) var identifier: String?

    /// Headers added to every request that does not set them itself.
    open var httpAdditionalHeaders: [AnyHashable: Any]?
    /// How long a request waits for more data (the gap between bytes), in seconds. Default 60.
    open var timeoutIntervalForRequest: TimeInterval = 60
    /// How long a task may take in all, in seconds. Default 7 days.
    open var timeoutIntervalForResource: TimeInterval = 604_800
    /// Wait for a network instead of failing at once when there is none
    /// (`urlSession(_:taskIsWaitingForConnectivity:)` is called once). Background sessions
    /// always wait.
    open var waitsForConnectivity = false
    /// The most connections opened to one host at a time. Default 6.
    open var httpMaximumConnectionsPerHost = 6
    /// When false, tasks wait while the route is metered (background sessions: the daemon holds
    /// them; other sessions fail them with `URLError.notConnectedToInternet` and
    /// `networkUnavailableReason` `.expensive`).
    open var allowsExpensiveNetworkAccess = true
    /// When false, tasks wait while the network is in a low-data mode (kept with the task; Linux
    /// has no such mode, so it never holds one).
    open var allowsConstrainedNetworkAccess = true
    /// Apple's older name for ``allowsExpensiveNetworkAccess`` on cellular; kept with the task.
    open var allowsCellularAccess = true
    /// Let the daemon run background tasks at a time the user marks as cheap (its schedule).
    open var isDiscretionary = false
    /// Start the program again when its background tasks end while it is not running. Default
    /// true, as on Apple's platforms.
    open var sessionSendsLaunchEvents = true
    /// `kCFNetworkProxiesHTTPProxy`/`HTTPPort`, `HTTPSProxy`/`HTTPSPort` (and `HTTPEnable`):
    /// the proxy for this session's requests. Default: nil, the environment's `http_proxy` and
    /// `https_proxy`.
    open var connectionProxyDictionary: [AnyHashable: Any]?
    /// Which cached responses data tasks may use. Default `.useProtocolCachePolicy`.
    open var requestCachePolicy: URLRequest.CachePolicy = .useProtocolCachePolicy
    /// Where data tasks' responses are cached; nil for no cache.
    open var urlCache: URLCache?
    /// Where cookies are read and kept; nil for none.
    open var httpCookieStorage: HTTPCookieStorage?
    /// Send and keep cookies. Default true.
    open var httpShouldSetCookies = true
    /// Which cookies are accepted. Default `.onlyFromMainDocumentDomain`.
    open var httpCookieAcceptPolicy: HTTPCookie.AcceptPolicy = .onlyFromMainDocumentDomain
    /// Credentials for HTTP authentication challenges the delegate leaves to the session.
    open var urlCredentialStorage: URLCredentialStorage?
    /// Kept for source compatibility; Ferry does not pipeline.
    open var httpShouldUsePipelining = false
    /// Kept for source compatibility; Linux has no app groups.
    open var sharedContainerIdentifier: String?
    /// Kept for source compatibility.
    open var networkServiceType: URLRequest.NetworkServiceType = .default
    /// For a background configuration, which Ferry daemon runs its tasks and whether it may be
    /// started: FerryKit's settings. Default: the current user's daemon (`FERRY_HOME`, else XDG),
    /// started with `ferry` from the `PATH` when none runs.
    open var ferryDaemon = BackgroundSession.Configuration()

    init(kind: Kind, identifier: String? = nil) {
        self.kind = kind
        self.identifier = identifier
        super.init()
        switch kind {
        case .default:
            urlCache = .shared
            httpCookieStorage = .shared
            urlCredentialStorage = .shared
        case .ephemeral:
            urlCache = URLCache(memoryCapacity: 4 << 20, diskCapacity: 0, diskPath: nil)
            httpCookieStorage = nil  // the session keeps its cookies in memory (SessionCookies)
            urlCredentialStorage = nil
        case .background:
            urlCache = nil
            httpCookieStorage = .shared
            urlCredentialStorage = .shared
            waitsForConnectivity = true
        }
    }

    /// A new default configuration (each call makes a new object).
    open class var `default`: URLSessionConfiguration { URLSessionConfiguration(kind: .default) }

    /// A new configuration that keeps nothing after the session.
    open class var ephemeral: URLSessionConfiguration { URLSessionConfiguration(kind: .ephemeral) }

    /// A configuration whose download and upload tasks the Ferry daemon runs, under this
    /// identifier (up to 64 letters, digits, `.`, `_` or `-`; others are replaced by `_`). Make
    /// one session per identifier, as on Apple's platforms.
    open class func background(withIdentifier identifier: String) -> URLSessionConfiguration {
        URLSessionConfiguration(kind: .background, identifier: identifier)
    }

    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = URLSessionConfiguration(kind: kind, identifier: identifier)
        copy.httpAdditionalHeaders = httpAdditionalHeaders
        copy.timeoutIntervalForRequest = timeoutIntervalForRequest
        copy.timeoutIntervalForResource = timeoutIntervalForResource
        copy.waitsForConnectivity = waitsForConnectivity
        copy.httpMaximumConnectionsPerHost = httpMaximumConnectionsPerHost
        copy.allowsExpensiveNetworkAccess = allowsExpensiveNetworkAccess
        copy.allowsConstrainedNetworkAccess = allowsConstrainedNetworkAccess
        copy.allowsCellularAccess = allowsCellularAccess
        copy.isDiscretionary = isDiscretionary
        copy.sessionSendsLaunchEvents = sessionSendsLaunchEvents
        copy.connectionProxyDictionary = connectionProxyDictionary
        copy.requestCachePolicy = requestCachePolicy
        copy.urlCache = urlCache
        copy.httpCookieStorage = httpCookieStorage
        copy.httpShouldSetCookies = httpShouldSetCookies
        copy.httpCookieAcceptPolicy = httpCookieAcceptPolicy
        copy.urlCredentialStorage = urlCredentialStorage
        copy.httpShouldUsePipelining = httpShouldUsePipelining
        copy.sharedContainerIdentifier = sharedContainerIdentifier
        copy.networkServiceType = networkServiceType
        copy.ferryDaemon = ferryDaemon
        return copy
    }

    /// The headers of ``httpAdditionalHeaders`` that are strings.
    var additionalHeaders: [(String, String)] {
        (httpAdditionalHeaders ?? [:]).compactMap { key, value in
            guard let name = key as? String else { return nil }
            return (name, value as? String ?? "\(value)")
        }
    }
}
