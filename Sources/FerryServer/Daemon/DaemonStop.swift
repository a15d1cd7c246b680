/// How the daemon is asked to stop: for good (`POST /v1/shutdown`), or to start again at once
/// with the same arguments, reading its settings anew (`POST /v1/restart`: `ferry serve` runs
/// itself again in the same process, so systemd and a terminal keep it alike).
package enum DaemonStop: Sendable {
    case shutdown, restart
}
