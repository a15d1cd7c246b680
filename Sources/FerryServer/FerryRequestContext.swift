import FerryKit
import Foundation
import Hummingbird

/// The request context of the daemon's router: Ferry's JSON encoding (ISO 8601 dates, sorted
/// keys) for requests and responses.
public struct FerryRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }

    public var requestDecoder: JSONDecoder { FerryJSON.decoder() }
    public var responseEncoder: JSONEncoder { FerryJSON.encoder() }
}
