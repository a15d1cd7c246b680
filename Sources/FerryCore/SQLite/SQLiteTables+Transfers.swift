import FerryModel
import GRDB

extension SQLiteTables {
    /// The transfer engine's own: transfers, events, sessions and the boot the daemon last ran
    /// in. Shipped migrations never change; new ones are appended, with a version after the
    /// newest of every module's. (v2's name is what journals know it by; its podcast, episode and
    /// track tables are the listening library's own v2.1 now.)
    package static let transfers = SQLiteTables(
        migrations: [
            Migration(1, "v1: transfers, events, sessions") { db in
                try db.create(table: "transfer") { t in
                    t.autoIncrementedPrimaryKey("id")
                    t.column("session", .text).notNull()
                    t.column("url", .text).notNull()
                    t.column("state", .text).notNull()
                    t.column("folder", .text).notNull()
                    t.column("suggestedName", .text)
                    t.column("taskDescription", .text)
                    t.column("nameHint", .text)
                    t.column("fileName", .text)
                    t.column("durableBytes", .integer).notNull().defaults(to: 0)
                    t.column("totalBytes", .integer)
                    t.column("validator", .text)
                    t.column("sha256", .text)
                    t.column("errorCode", .text)
                    t.column("errorMessage", .text)
                    t.column("attempts", .integer).notNull().defaults(to: 0)
                    t.column("failures", .integer).notNull().defaults(to: 0)
                    t.column("retryAt", .datetime)
                    t.column("keepsPartFile", .boolean).notNull().defaults(to: false)
                    t.column("createdAt", .datetime).notNull()
                    t.column("updatedAt", .datetime).notNull()
                    t.column("completedAt", .datetime)
                }
                try db.create(index: "transfer_session_url", on: "transfer", columns: ["session", "url"])
                try db.create(index: "transfer_state", on: "transfer", columns: ["state", "id"])
                // AUTOINCREMENT: a sequence number is never reused, even after pruning, so a
                // client's Last-Event-ID always means the same point in history.
                try db.execute(sql: """
                    CREATE TABLE event (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        session TEXT NOT NULL,
                        transferId INTEGER NOT NULL,
                        kind TEXT NOT NULL,
                        payload TEXT NOT NULL,
                        createdAt DATETIME NOT NULL
                    )
                    """)
                try db.create(index: "event_session_seq", on: "event", columns: ["session", "seq"])
                try db.create(table: "session") { t in
                    t.primaryKey("name", .text)
                    t.column("acknowledgedSeq", .integer).notNull().defaults(to: 0)
                }
            },
            Migration(2, "v2: preferred names, podcasts, episodes, catalog tracks") { db in
                try db.alter(table: "transfer") { t in
                    t.add(column: "preferredName", .text)
                }
            },
            Migration(3, "v3: uploads, transfer options, session configuration") { db in
                try db.alter(table: "transfer") { t in
                    t.add(column: "kind", .text).notNull().defaults(to: TransferKind.download.rawValue)
                    t.add(column: "method", .text)
                    t.add(column: "sourcePath", .text)
                    t.add(column: "sourceIdentity", .text)
                    t.add(column: "formField", .text)
                    t.add(column: "uploadProtocol", .text)
                    t.add(column: "uploadURL", .text)
                    t.add(column: "responseStatus", .integer)
                    t.add(column: "responseHeaders", .text)
                    t.add(column: "responseBody", .text)
                    t.add(column: "options", .text)
                    t.add(column: "startAfter", .datetime)
                }
                try db.alter(table: "session") { t in
                    t.add(column: "options", .text)
                }
            },
            Migration(4, "v4: the boot the daemon last ran in") { db in
                try db.create(table: "daemon") { t in
                    t.primaryKey("key", .text)
                    t.column("value", .text).notNull()
                }
            },
            Migration(5, "v5: retrying becomes waiting, with its reason and since when") { db in
                try db.alter(table: "transfer") { t in
                    t.add(column: "waitReason", .text)
                    t.add(column: "waitingSince", .datetime)
                    t.add(column: "waitsForNetwork", .boolean).notNull().defaults(to: false)
                }
                try db.execute(sql: "UPDATE transfer SET state = 'waiting', waitingSince = updatedAt WHERE state = 'retrying'")
                try db.execute(sql: """
                    UPDATE event SET kind = 'waiting', payload = json_set(payload, '$.kind', 'waiting') WHERE kind = 'retrying'
                    """)
            },
            Migration(7, "v7: segmented downloads' ranges") { db in
                try db.alter(table: "transfer") { t in t.add(column: "segments", .text) }
            },
            Migration(8, "v8: mirrors") { db in
                try db.alter(table: "transfer") { t in t.add(column: "mirrors", .text) }
            },
            Migration(9, "v9: destinations, checksums, priorities") { db in
                try db.alter(table: "transfer") { t in
                    t.add(column: "directory", .text)
                    t.add(column: "outputName", .text)
                    t.add(column: "overwrite", .boolean).notNull().defaults(to: false)
                    t.add(column: "checksum", .text)
                    t.add(column: "serverDigest", .text)
                    t.add(column: "verifiedBy", .text)
                    t.add(column: "priority", .integer).notNull().defaults(to: 0)
                    t.add(column: "queueRank", .integer)
                }
            },
            Migration(10, "v10: transfers removed from the list but kept for the library") { db in
                try db.alter(table: "transfer") { t in t.add(column: "hidden", .boolean).notNull().defaults(to: false) }
            },
            Migration(18, "v18: the account that asked for a transfer") { db in
                try db.alter(table: "transfer") { t in t.add(column: "requestedBy", .text) }
            },
            Migration(20, "v20: where retention pruned each session's events") { db in
                try db.alter(table: "session") { t in t.add(column: "prunedSeq", .integer).notNull().defaults(to: 0) }
            },
            Migration(21, "v21: sessions whose program acknowledges events") { db in
                try db.alter(table: "session") { t in t.add(column: "acknowledges", .boolean).notNull().defaults(to: false) }
                try db.execute(sql: "UPDATE session SET acknowledges = 1 WHERE acknowledgedSeq > 0")
            },
            Migration(23, "v23: each session's cookie jar") { db in
                try db.alter(table: "session") { t in t.add(column: "cookies", .text) }
            },
            Migration(24, "v24: the HTTP version a transfer's answer came over") { db in
                try db.alter(table: "transfer") { t in t.add(column: "httpVersion", .text) }
            },
            Migration(25, "v25: the credential store") { db in
                try db.create(table: "credential") { t in
                    t.column("host", .text).primaryKey()
                    t.column("user", .text).notNull()
                    t.column("password", .text).notNull()
                    t.column("addedAt", .double).notNull()
                }
            },
        ]
    )
}
