import Dispatch
import FerryModel

/// Blocking file-system calls (fsync, link, rename) made on threads of their own.
///
/// Swift's cooperative threads are as many as the cores (two here). An fsync that waits tens of
/// milliseconds for the disk on one of them stalls every task scheduled there: a download's next
/// read, other transfers, the API. Dispatch adds a thread when one blocks.
enum BlockingIO {
    private static let queue = DispatchQueue(label: "ferry.blocking-io", attributes: .concurrent)

    static func run<T: Sendable>(_ work: @escaping @Sendable () throws(FerryError) -> T) async throws(FerryError) -> T {
        let result: Result<T, FerryError> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Result { () throws(FerryError) -> T in try work() })
            }
        }
        return try result.get()
    }
}
