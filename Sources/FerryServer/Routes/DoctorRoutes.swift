import FerryCore
import FerryKit
import FerryListening
import Foundation
import Hummingbird

/// `GET /v1/doctor` (what `ferry doctor` reports) and `POST /v1/doctor` (`--fix`): an admin's.
struct DoctorRoutes {
    let engine: TransferEngine
    let podcasts: PodcastLibrary
    let paths: FerryPaths
    let address: DaemonAddress
    let syncAddress: DaemonAddress
    let aria2Address: DaemonAddress
    let remote: RemoteListeners?

    func register(on api: RouterGroup<FerryRequestContext>) {
        api.get("doctor") { _, context in try jsonResponse(await examine(context, fix: false)) }
        api.post("doctor") { _, context in try jsonResponse(await examine(context, fix: true)) }
    }

    private func examine(_ context: FerryRequestContext, fix: Bool) async throws -> DoctorReport {
        guard context.credential?.isAdmin == true else { throw FerryError(.forbidden, "Only an admin asks Ferry what is wrong with it.") }
        var listening: [(name: String, url: String)] = []
        if let url = address.url { listening.append(("API", url)) }
        if let url = syncAddress.url { listening.append(("sync API", url)) }
        if let url = aria2Address.url { listening.append(("aria2 RPC", url)) }
        for url in remote?.status().urls ?? [] { listening.append(("beyond loopback", url)) }
        let doctor = Doctor(paths: paths, journal: engine.journal, local: engine.local, podcasts: podcasts, listening: listening)
        return await doctor.examine(fix: fix)
    }
}
