import FerryKit
import Foundation

/// Live progress for `ferry get` and `ferry wait`: on a terminal, one bar per transfer redrawn
/// in place; otherwise one line per state change.
struct ProgressView {
    private(set) var transfers: [Transfer]
    /// Where each transfer is in `transfers`: `ferry get` may follow thousands.
    private let position: [Int64: Int]
    private var unfinished: Int
    /// Indices whose state changed since the last draw (the plain output prints only those).
    private var changed: [Int] = []
    private var drawnLines = 0
    private var lastDraw = ContinuousClock.now - .seconds(1)
    private let interactive = Terminal.isInteractive
    var note: String?

    init(transfers: [Transfer]) {
        self.transfers = transfers
        position = Dictionary(transfers.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        unfinished = transfers.count { !$0.state.isFinal }
        changed = Array(transfers.indices)
    }

    var ids: Set<Int64> { Set(position.keys) }
    var allFinal: Bool { unfinished == 0 }

    func transfer(_ id: Int64) -> Transfer? {
        position[id].map { transfers[$0] }
    }

    mutating func replace(_ transfer: Transfer) {
        guard let index = position[transfer.id] else { return }
        set(index, transfer)
    }

    private mutating func set(_ index: Int, _ transfer: Transfer) {
        let before = transfers[index].state
        if before != transfer.state {
            unfinished += (transfer.state.isFinal ? 0 : 1) - (before.isFinal ? 0 : 1)
            changed.append(index)
        }
        transfers[index] = transfer
    }

    /// Applies an event of the session. Events carry what a line needs (bytes, error, path,
    /// SHA-256), so nothing is fetched per event.
    mutating func apply(_ event: TransferEvent) {
        guard let index = position[event.transferId] else { return }
        var transfer = transfers[index]
        // Live progress is sampled apart from the journal and may arrive after the transfer
        // paused or finished: it must not bring it back to running.
        if event.seq == nil, transfer.state != .queued, transfer.state != .running { return }
        switch event.kind {
        case .created, .mirrorDropped: break
        case .started, .resumed, .restarted: transfer.state = .running
        // A worker's last checkpoint can follow a pause when a slow disk delays it past the
        // pause's answer: it does not make the transfer run again.
        case .progress where transfer.state == .queued || transfer.state == .waiting: transfer.state = .running
        case .progress: break
        case .paused: transfer.state = .paused
        case .waiting:
            transfer.state = .waiting
            transfer.waitReason = event.reason
            transfer.retryAt = event.retryAt
            transfer.error = event.error
        case .completed: transfer.state = .completed
        case .failed: transfer.state = .failed
        case .cancelled, .removed: transfer.state = .cancelled
        }
        // A journaled event carries the bytes made durable, which lag the live count (a
        // checkpoint's fsync, or a last checkpoint delayed past a pause): only a resume or a
        // restart, from what is on disk, moves it back.
        if let bytes = event.bytesReceived,
            bytes >= transfer.bytesReceived || event.kind == .resumed || event.kind == .restarted || event.totalBytes != transfer.totalBytes
        {
            transfer.bytesReceived = bytes
        }
        if let total = event.totalBytes { transfer.totalBytes = total }
        if event.kind == .progress, event.seq == nil {
            transfer.bytesPerSecond = event.bytesPerSecond
            transfer.etaSeconds = event.etaSeconds
            transfer.connections = event.connections
        }
        if let error = event.error { transfer.error = error }
        if let path = event.path { transfer.path = path }
        if let sha = event.sha256 { transfer.sha256 = sha }
        set(index, transfer)
    }

    mutating func draw(force: Bool = false) {
        if !interactive {
            for index in changed { Terminal.progress(Self.summary(transfers[index]) + "\n") }
            changed.removeAll()
            return
        }
        let now = ContinuousClock.now
        guard force || now - lastDraw >= .milliseconds(100) else { return }
        lastDraw = now
        var output = drawnLines > 0 ? "\u{1B}[\(drawnLines)A" : ""
        let width = Terminal.width
        var lines = transfers.map { Self.bar($0, width: width) }
        if let note { lines.append(note) }
        for line in lines { output += "\r\u{1B}[2K" + line + "\n" }
        // Clear lines left over from a longer previous frame.
        for _ in lines.count..<max(drawnLines, lines.count) { output += "\r\u{1B}[2K\n" }
        drawnLines = max(drawnLines, lines.count)
        Terminal.progress(output)
    }

    /// `  3 song.m4a  [#########.........]  42.0% of 1.2 MB  850 kB/s  ETA 0:02`
    static func bar(_ transfer: Transfer, width: Int) -> String {
        let state: String
        switch transfer.state {
        case .running:
            state = [Format.speedAndConnections(transfer), transfer.etaSeconds.map { "ETA " + Format.duration($0) } ?? ""]
                .filter { !$0.isEmpty }.joined(separator: "  ")
        case .completed: state = "done"
        case .waiting: state = "waiting: " + Format.waiting(transfer)
        case .failed: state = "failed" + (transfer.error.map { ": \($0.message)" } ?? "")
        default: state = transfer.state.rawValue
        }
        let barWidth = max(10, min(30, width / 4))
        let filled = Int((transfer.fractionCompleted ?? 0) * Double(barWidth))
        let bar = "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: barWidth - filled) + "]"
        let head = "\(Format.pad(String(transfer.id), 4)) \(Format.truncate(Format.name(transfer), to: 28))"
        return Format.truncate("\(Format.pad(head, 34)) \(bar) \(Format.progress(transfer))  \(state)", to: width - 1)
    }

    /// One line for logs and scripts: `3 completed /path/file (sha256 …)`.
    static func summary(_ transfer: Transfer) -> String {
        switch transfer.state {
        case .completed where transfer.kind == .upload:
            let status = transfer.response.map { " → \($0.status)" } ?? ""
            return "\(transfer.id) uploaded \(transfer.sourcePath ?? "") to \(transfer.url)\(status) (\(Format.bytes(transfer.bytesReceived)), sha256 \(transfer.sha256 ?? "?"))"
        case .completed:
            return "\(transfer.id) completed \(transfer.path ?? "") (\(Format.bytes(transfer.bytesReceived)), sha256 \(transfer.sha256 ?? "?"))"
        case .failed:
            return "\(transfer.id) failed: \(transfer.error?.message ?? "unknown error")"
        case .waiting:
            return "\(transfer.id) waiting: \(Format.waiting(transfer))"
        default:
            return "\(transfer.id) \(transfer.state.rawValue) \(transfer.url)"
        }
    }
}
