/// Which queued transfers start first: higher priority first, then the oldest (or where
/// ``TransferUpdate/position`` put it).
public enum TransferPriority: String, Codable, Sendable, Hashable, CaseIterable, Comparable {
    case low, normal, high

    /// The order of the queue: high before normal before low.
    public var rank: Int {
        switch self {
        case .low: -1
        case .normal: 0
        case .high: 1
        }
    }

    public init(rank: Int) {
        self = rank > 0 ? .high : rank < 0 ? .low : .normal
    }

    public static func < (a: Self, b: Self) -> Bool { a.rank < b.rank }
}

/// `PATCH /v1/transfers/{id}`: where a transfer stands in the queue.
public struct TransferUpdate: Codable, Sendable, Hashable {
    /// Its priority from now on.
    public var priority: TransferPriority?
    /// `first`: ahead of every queued transfer (raised to their highest priority if lower);
    /// `last`: behind them all (lowered to their lowest).
    public var position: Position?
    /// Its label from now on (a URLSession task's `taskDescription`); empty removes it.
    public var taskDescription: String?

    public enum Position: String, Codable, Sendable, Hashable, CaseIterable {
        case first, last
    }

    /// Each parameter sets the property of the same name.
    public init(priority: TransferPriority? = nil, position: Position? = nil, taskDescription: String? = nil) {
        self.priority = priority
        self.position = position
        self.taskDescription = taskDescription
    }
}
