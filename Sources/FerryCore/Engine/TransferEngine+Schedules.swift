import FerryModel
import Foundation

/// Bandwidth schedules: each session's (and the daemon's) limit and pauses by the clock.
extension TransferEngine {
    /// Whether the network is metered now, when any option asks (else neither the route table
    /// nor NetworkManager is read).
    nonisolated func metered(_ all: [String: TransferOptions]) async -> Bool {
        guard all.values.contains(where: { $0.allowsMeteredNetwork == false }) else { return false }
        return NetworkMetering.isMetered(
            interfaces: all[TransferJournalKeys.daemonOptions]?.meteredInterfaces ?? [], networkManager: await configuration.networkManagerMetered()
        )
    }

    /// Asks again every ``Configuration/meteredRecheckInterval`` while some session cares, and
    /// applies the limits when the answer changed.
    nonisolated func recheckMetered() async {
        while await shutdown.sleep(for: configuration.meteredRecheckInterval, clock: ContinuousClock()) {
            guard let all = try? await journal.allSessionOptions(), all.values.contains(where: { $0.allowsMeteredNetwork == false }) else { continue }
            if await metered(all) != meteredNow { await applySchedules() }
        }
    }

    /// Applies changed configuration: limits of running transfers, and the queue.
    func configurationChanged(session: String?, options: TransferOptions) async {
        if options.schedule == nil { bandwidth.update(session: session, bytesPerSecond: options.bytesPerSecond) }
        if session == nil { clients.setDaemonOptions(options) }
        await applySchedules()
    }

    /// Bandwidth by the clock: every schedule's limit as it stands now goes to the limiters and
    /// its pauses to the control (which stops what runs in a closed window); then a wake-up at
    /// the next edge of any window does it again.
    func applySchedules(now: Date = Date()) async {
        scheduleWake?.cancel()
        scheduleWake = nil
        let all: [String: TransferOptions]
        do {
            all = try await journal.allSessionOptions()
        } catch {
            logger.error("cannot read the configuration", metadata: ["error": "\(error)"])
            return
        }
        var next: Date?
        for (key, options) in all {
            guard let schedule = options.schedule else { continue }
            let state = schedule.state(at: now)
            bandwidth.update(session: key == TransferJournalKeys.daemonOptions ? nil : key, bytesPerSecond: state.bytesPerSecond, scheduled: true)
            if let until = state.until { next = min(next ?? until, until) }
        }
        let metered = await metered(all)
        meteredNow = metered
        let limits = TransferControl.Limits(options: all, maxConcurrent: configuration.maxConcurrent, now: now, metered: metered)
        if next != nil || !limits.paused.isEmpty {
            logger.debug("schedules applied", metadata: ["paused": "\(limits.paused.sorted())", "next": "\(next.map { "\($0)" } ?? "none")"])
        }
        await input(.limits(limits))
        if let next {
            scheduleWake = Task {
                // Just past the edge, so the window it opens or closes is the one seen.
                try? await Task.sleep(for: .seconds(max(0, next.timeIntervalSinceNow) + 0.05))
                guard !Task.isCancelled else { return }
                await self.scheduleEdge()
            }
        }
    }

    /// A window's edge: its wake-up is done (and must not cancel itself), then the schedules
    /// apply again.
    private func scheduleEdge() async {
        scheduleWake = nil
        await applySchedules()
    }

    func stopSchedules() {
        scheduleWake?.cancel()
        scheduleWake = nil
    }
}
