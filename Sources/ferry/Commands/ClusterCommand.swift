import ArgumentParser
import FerryKit
import Foundation

struct ClusterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster",
        abstract: "Several daemons working through one queue in PostgreSQL.",
        discussion: """
            Every daemon started with the same database is a member of one cluster:
              ferry serve --database postgres://ferry@db.example/ferry --member host-a
            (or FERRY_DATABASE_URL). Each claims queued transfers as it has free slots; when a \
            member dies or is cut off, the others take its transfers after its leases lapse \
            (10 seconds), from its bytes when the library is on storage every member mounts. \
            See docs/CLUSTER.md.
            """,
        subcommands: [ClusterStatusCommand.self],
        defaultSubcommand: ClusterStatusCommand.self
    )
}

struct ClusterStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "List the cluster's members: their addresses, last heartbeat and what each holds."
    )

    @OptionGroup var output: OutputOptions

    func run() async throws {
        let client = try await CLIConnection.connect()
        let cluster = try await client.cluster()
        if output.json {
            try FerryJSON.encoder(pretty: true).printing(cluster)
            return
        }
        Terminal.print("This daemon is member \(cluster.member); \(cluster.members.filter(\.alive).count) of \(cluster.members.count) members alive.")
        let now = Date()
        for member in cluster.members {
            let ago = max(0, Int(now.timeIntervalSince(member.heartbeatAt).rounded()))
            let holds = member.transfers.isEmpty ? "holds nothing" : "holds \(member.transfers.count): \(member.transfers.prefix(10).map(String.init).joined(separator: ", "))\(member.transfers.count > 10 ? ", …" : "")"
            Terminal.print("  \(member.id)\(member.id == cluster.member ? " (this one)" : "")  \(member.alive ? "alive" : "gone ")  \(member.address ?? "-")  beat \(ago) s ago  \(holds)")
        }
    }
}
