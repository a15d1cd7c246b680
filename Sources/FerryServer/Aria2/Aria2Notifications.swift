import FerryCore
import FerryKit
import Foundation

/// aria2's notifications over its WebSocket, from Ferry's events: a download started (or
/// resumed), paused, stopped (cancelled), completed or failed. Pure.
enum Aria2Notifications {
    static func method(for kind: TransferEvent.Kind) -> String? {
        switch kind {
        case .started: "aria2.onDownloadStart"
        case .paused: "aria2.onDownloadPause"
        case .cancelled: "aria2.onDownloadStop"
        case .completed: "aria2.onDownloadComplete"
        case .failed: "aria2.onDownloadError"
        default: nil
        }
    }

    /// `{"jsonrpc": "2.0", "method": "aria2.onDownloadComplete", "params": [{"gid": "…"}]}`, or nil
    /// for an event aria2 does not announce.
    static func message(_ event: TransferEvent, gid: String) -> Data? {
        guard let method = method(for: event.kind) else { return nil }
        return Aria2RPC.encode(["jsonrpc": "2.0", "method": method, "params": [["gid": gid]]])
    }
}
