import AsyncHTTPClient
import FerryKit
import FerryTestSupport
import Foundation

import FerryCore
@testable import FerryListening

/// A loopback ``CatalogServer``, an HTTP client and a manual clock for one test; catalog
/// clients made from it call the server and never sleep for real.
struct CatalogHarness: Sendable {
    let server: CatalogServer
    let base: URL
    let http: HTTPClient
    let clock: ManualClock

    /// So generous that only the rate-limit tests ever meet it.
    static let noRateLimit = CatalogRateLimit(calls: 10_000, per: .seconds(1), burst: 10_000)

    func client(
        cacheTTL: Duration = .seconds(15 * 60), rateLimit: CatalogRateLimit = noRateLimit, requestTimeout: Duration = .seconds(10)
    ) -> CatalogClient {
        CatalogClient(
            baseURL: base, clients: HTTPClients(direct: http), clock: clock, logger: testLogger("catalog"), cacheTTL: cacheTTL, rateLimit: rateLimit,
            requestTimeout: requestTimeout
        )
    }

    static func run<T: Sendable>(readTimeout: Duration = .seconds(30), _ body: (CatalogHarness) async throws -> T) async throws -> T {
        let http = try makeTestHTTPClient(readTimeout: readTimeout)
        do {
            let result = try await CatalogServer.run { server, base in
                try await body(CatalogHarness(server: server, base: base, http: http, clock: ManualClock()))
            }
            try await http.shutdown()
            return result
        } catch {
            try? await http.shutdown()
            throw error
        }
    }
}

/// The `FerryError` that `operation` throws; nil if it succeeds. Any other error becomes an
/// `internal` FerryError naming it, so that an exact comparison fails with something readable.
func ferryError<T>(_ operation: () async throws -> T) async -> FerryError? {
    do {
        _ = try await operation()
        return nil
    } catch let error as FerryError {
        return error
    } catch {
        return FerryError(.internalError, "not a FerryError: \(error)")
    }
}

/// Apple's search JSON for inline quirk tests: `results` holds `results` verbatim.
func appleJSON(_ results: String...) -> Data {
    Data(#"{"resultCount": \#(results.count), "results": [\#(results.joined(separator: ","))]}"#.utf8)
}
