import FerryCore
import FerryKit
import FerryListening
import Foundation
import Hummingbird

/// Each listener's playlists: listed, made, renamed, removed; their items replaced in order,
/// one added, or one moved between them and Up Next.
extension ListeningRoutes {
    func registerPlaylists(on api: RouterGroup<FerryRequestContext>) {
        api.get("playlists") { _, context in try jsonResponse(try await podcasts.as(context.listener).playlists()) }
        api.post("playlists") { request, context in
            let new = try await request.decodeJSON(NewPlaylist.self, context: context)
            return try jsonResponse(try await podcasts.as(context.listener).createPlaylist(new), status: .created)
        }
        api.post("playlists/move") { request, context in
            let move = try await request.decodeJSON(PlaylistMove.self, context: context)
            try await podcasts.as(context.listener).move(move)
            return Response(status: .noContent)
        }
        api.get("playlists/:id") { _, context in
            try jsonResponse(try await podcasts.as(context.listener).playlist(id: try context.parameters.mediaID("a playlist")))
        }
        api.patch("playlists/:id") { request, context in
            let id = try context.parameters.mediaID("a playlist")
            let change = try await request.decodeJSON(PlaylistRename.self, context: context)
            return try jsonResponse(try await podcasts.as(context.listener).renamePlaylist(id: id, change))
        }
        api.delete("playlists/:id") { _, context in
            try await podcasts.as(context.listener).deletePlaylist(id: try context.parameters.mediaID("a playlist"))
            return Response(status: .noContent)
        }
        api.put("playlists/:id/items") { request, context in
            let id = try context.parameters.mediaID("a playlist")
            let order = try await request.decodeJSON(UpNextOrder.self, context: context)
            return try jsonResponse(try await podcasts.as(context.listener).setPlaylistItems(id: id, order))
        }
        api.post("playlists/:id/items") { request, context in
            let id = try context.parameters.mediaID("a playlist")
            let entry = try await request.decodeJSON(UpNextEntry.self, context: context)
            return try jsonResponse(try await podcasts.as(context.listener).addToPlaylist(id: id, entry))
        }
    }
}
