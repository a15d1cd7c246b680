import FerryCore
import FerryKit
import Foundation
import Hummingbird

/// `/v1/status`, `/v1/shutdown`, `/v1/restart` and `/v1/openapi.yaml`.
struct DaemonRoutes {
    let engine: TransferEngine
    let paths: FerryPaths
    let startedAt: Date
    let address: DaemonAddress
    /// The sync listener's and the aria2 RPC's, when they run.
    let syncAddress: DaemonAddress
    let aria2Address: DaemonAddress
    let requestShutdown: @Sendable (DaemonStop) -> Void

    func register(on api: RouterGroup<FerryRequestContext>) {
        api.get("status") { _, _ in
            let counts = try await engine.journal.counts()
            let status = DaemonStatus(
                version: FerryVersion.current, pid: getpid(), url: address.url ?? "", startedAt: startedAt,
                libraryPath: paths.library.path, statePath: paths.state.path,
                maxConcurrent: engine.configuration.maxConcurrent,
                counts: Dictionary(uniqueKeysWithValues: counts.map { ($0.key.rawValue, $0.value) }),
                lastEventSeq: try await engine.journal.lastEventSeq(), syncURL: syncAddress.url, aria2URL: aria2Address.url
            )
            return try jsonResponse(status)
        }
        api.get("cluster") { _, _ in
            guard let leases = engine.leases else {
                throw FerryError(
                    .invalidState, "This daemon is not in a cluster: it keeps its own SQLite journal. `ferry serve --database postgres://…` makes it a member of one."
                )
            }
            return try jsonResponse(ClusterStatus(member: leases.member, members: try await leases.members()))
        }
        api.post("shutdown") { _, _ in
            requestShutdown(.shutdown)
            return Response(status: .accepted)
        }
        // An admin with only a browser applies the listeners' settings (they are bound at start).
        api.post("restart") { _, context in
            guard context.credential?.isAdmin == true else { throw FerryError(.forbidden, "Only an admin restarts Ferry.") }
            requestShutdown(.restart)
            return Response(status: .accepted)
        }
        api.get("openapi.yaml") { _, _ in
            guard let data = EmbeddedResources.file("openapi.yaml") else {
                throw FerryError(.internalError, "The OpenAPI document is missing from this build.")
            }
            return Response(
                status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: data))
            )
        }
    }
}
