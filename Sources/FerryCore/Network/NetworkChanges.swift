/// "The machine's network changed" (a link came up, an address or a route was added), told by the
/// ``NetworkWatcher`` and heard by every transfer waiting for the network and every running one
/// whose connection went quiet. Each change bumps a generation; a waiter passes the generation it
/// has seen and returns once a later one exists, so a change between two waits is never missed.
package final class NetworkChanges: Sendable {
    private let broadcast = Broadcast()

    package init() {}

    /// The current generation, to wait for a change after it.
    package var generation: UInt64 { broadcast.generation }

    /// A change happened: wakes every waiter.
    package func changed() { broadcast.signal() }

    /// Returns once the generation is past `seen`, or when the calling task is cancelled.
    package func wait(after seen: UInt64) async { await broadcast.wait(after: seen) }
}
