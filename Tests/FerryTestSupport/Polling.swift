/// Polls `condition` every few milliseconds until it holds, failing after `timeout` with
/// `message`. For waiting on background work in tests; never a pass/fail timing threshold.
package func eventually(
    _ message: @autoclosure () -> String, timeout: Duration = .seconds(20), poll: Duration = .milliseconds(10),
    _ condition: () async throws -> Bool
) async throws {
    let start = ContinuousClock.now
    while !(try await condition()) {
        if ContinuousClock.now - start > timeout { throw TestFailure("timed out waiting: \(message())") }
        try await Task.sleep(for: poll)
    }
}
