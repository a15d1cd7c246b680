import FerryCore
import FerryKit
import FerryListening
import Foundation
import Logging

extension Doctor {
    /// For `ferry doctor` when no daemon runs (the caller holds the daemon's lock): the journal
    /// opened here and the podcasts' store on it. Nothing is started: no transfer runs, no feed
    /// is fetched.
    package static func offline(paths: FerryPaths, journalCheck: DoctorCheck, logger: Logger) throws -> Doctor {
        let journal = try SQLiteJournal.open(at: paths.journal, tables: journalTables)
        let engine = TransferEngine(
            configuration: .init(), journal: journal, local: journal, leases: nil, library: LibraryFolder(root: paths.library),
            clients: HTTPClients(direct: .shared, configuration: TransferEngine.httpClientConfiguration(), environment: ProxyEnvironment()),
            clock: ContinuousClock(), logger: logger
        )
        let catalog = CatalogClient(baseURL: CatalogClient.defaultBaseURL, clients: engine.clients, clock: ContinuousClock(), logger: logger)
        let podcasts = PodcastLibrary(engine: engine, catalog: catalog, store: nil, logger: logger)
        return Doctor(paths: paths, journal: journal, local: journal, podcasts: podcasts, listening: nil, journalCheck: journalCheck)
    }
}
