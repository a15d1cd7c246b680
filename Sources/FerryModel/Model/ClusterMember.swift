import Foundation

/// A daemon working through a shared queue (`ferry cluster status`).
public struct ClusterMember: Codable, Sendable, Hashable {
    /// Its name: `--member`, else the host's name.
    public var id: String
    /// Where its API answers.
    public var address: String?
    public var startedAt: Date
    /// Its last sign of life, by the database's clock.
    public var heartbeatAt: Date
    /// False once it has not beaten for longer than a lease: its transfers go to the others.
    public var alive: Bool
    /// The transfers it holds (running, queued for it, or waiting to retry).
    public var transfers: [Int64]

    public init(id: String, address: String?, startedAt: Date, heartbeatAt: Date, alive: Bool, transfers: [Int64]) {
        self.id = id
        self.address = address
        self.startedAt = startedAt
        self.heartbeatAt = heartbeatAt
        self.alive = alive
        self.transfers = transfers
    }
}

/// `GET /v1/cluster`: this daemon's place in a cluster.
public struct ClusterStatus: Codable, Sendable, Hashable {
    /// This daemon's name.
    public var member: String
    public var members: [ClusterMember]

    public init(member: String, members: [ClusterMember]) {
        self.member = member
        self.members = members
    }
}
