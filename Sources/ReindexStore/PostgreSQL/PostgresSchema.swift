

/// The PostgreSQL index's schema, as numbered migrations applied in order inside the deployment's
/// own schema (`PostgresLocation.schema`); the version is kept in `schema_version`.
///
/// Full text: one `tsvector` per item, made by the host from the tokens SQLite's full-text index
/// makes of the same text (`PostgresDocument`: each attribute in a slot of positions, weighted A
/// title and displayName, B keywords and alternateNames, C contentDescription and authors, D
/// textContent); a GIN index over it. (The `reindex_search` configuration — the `simple`
/// dictionary after `unaccent` — made the documents up to migration 10.)
enum PostgresSchema {
    /// The statements that make the deployment's schema and the text-search configuration; run
    /// once, before the migrations, under the migration lock. `%S` is the quoted schema, `%U` the
    /// schema of the `unaccent` extension.
    static let searchConfiguration = """
        CREATE TEXT SEARCH CONFIGURATION %S.reindex_search (COPY = pg_catalog.simple);
        ALTER TEXT SEARCH CONFIGURATION %S.reindex_search
            ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part WITH %U.unaccent, pg_catalog.simple;
        """

    static let migrations: [String] = [
        // 1: bundles, items with generations and their weighted text, the request queue with
        // leases, run history, and the fleet: workers, which hosts have which bundle, duties done
        // once for the whole fleet.
        """
        CREATE TABLE bundles(
            key text PRIMARY KEY,
            identifier text NOT NULL,
            live_gen bigint NOT NULL DEFAULT 0,
            version text,
            fingerprint text,
            first_seen double precision,
            last_seen double precision,
            missing_since double precision,
            attributes text
        );
        CREATE TABLE items(
            id bigserial PRIMARY KEY,
            bundle text NOT NULL,
            gen bigint NOT NULL,
            uid text NOT NULL,
            domain text,
            expires double precision,
            attributes text NOT NULL,
            refresh_asked_for double precision,
            batch bigint,
            doc tsvector NOT NULL,
            UNIQUE(bundle, gen, uid)
        );
        CREATE INDEX items_doc ON items USING gin(doc);
        CREATE INDEX items_domain ON items(bundle, gen, domain) WHERE domain IS NOT NULL;
        CREATE INDEX items_expires ON items(expires) WHERE expires IS NOT NULL;
        CREATE TABLE staged_generations(
            bundle text NOT NULL,
            gen bigint NOT NULL,
            committed_batch bigint NOT NULL,
            PRIMARY KEY(bundle, gen)
        );
        CREATE TABLE requests(
            id bigserial PRIMARY KEY,
            bundle text NOT NULL,
            bundle_identifier text NOT NULL,
            kind text NOT NULL,
            identifiers text,
            reason text NOT NULL,
            state text NOT NULL DEFAULT 'pending',
            attempts integer NOT NULL DEFAULT 0,
            max_attempts integer NOT NULL DEFAULT 5,
            next_attempt double precision NOT NULL,
            last_error text,
            client_state text,
            created double precision NOT NULL,
            updated double precision NOT NULL,
            progress text,
            lease_worker text,
            lease_expires double precision,
            lease_backend integer
        );
        CREATE INDEX requests_due ON requests(state, next_attempt);
        CREATE INDEX requests_bundle ON requests(bundle, state);
        CREATE TABLE runs(
            id bigserial PRIMARY KEY,
            request_id bigint,
            bundle text NOT NULL,
            kind text NOT NULL,
            reason text NOT NULL,
            started double precision NOT NULL,
            ended double precision NOT NULL,
            outcome text NOT NULL,
            put integer NOT NULL DEFAULT 0,
            deleted integer NOT NULL DEFAULT 0,
            rejected integer NOT NULL DEFAULT 0,
            error text,
            worker text
        );
        CREATE INDEX runs_bundle ON runs(bundle, id);
        CREATE TABLE workers(
            id text PRIMARY KEY,
            host text NOT NULL,
            pid integer NOT NULL,
            started double precision NOT NULL,
            last_seen double precision NOT NULL,
            running text
        );
        CREATE TABLE bundle_hosts(
            bundle text NOT NULL,
            host text NOT NULL,
            last_seen double precision NOT NULL,
            PRIMARY KEY(bundle, host)
        );
        CREATE TABLE duties(
            name text PRIMARY KEY,
            last_done double precision NOT NULL
        );
        """,
        // 2: an item's batch number is not kept: a batch is one transaction, so a failed one
        // leaves no rows to find, and clearing the numbers at the acknowledgement rewrote every
        // row of the new generation.
        """
        ALTER TABLE items DROP COLUMN batch;
        """,
        // 3: the attributes as `jsonb`, parsed once when the item is written, for the query
        // language's filters, sorts and facets (which parsed every visible item's text before).
        // JSON text may hold `\u0000`, which `jsonb` refuses: it becomes U+FFFD (an escape of
        // the same length, so the text stays valid JSON).
        #"""
        ALTER TABLE items ADD COLUMN j jsonb GENERATED ALWAYS AS (
            CASE WHEN strpos(attributes, '\u0000') = 0 THEN attributes::jsonb ELSE replace(attributes, '\u0000', '\ufffd')::jsonb END
        ) STORED;
        """#,
        // 4: `rating` as the query language reads it (PostgresQueryCompiler.number), indexed for
        // its filters (only the items that have one: a comparison implies it is there) and,
        // with the tie-breakers of a sorted page, for `--sort rating:desc`, best first, so
        // those read the first page from an index instead of every item. The expressions must
        // stay the compiler's, or the planner cannot use them.
        """
        CREATE INDEX items_rating ON items ((CASE WHEN jsonb_typeof(j->'rating') = 'number' THEN (j->>'rating')::float8 END))
            WHERE (CASE WHEN jsonb_typeof(j->'rating') = 'number' THEN (j->>'rating')::float8 END) IS NOT NULL;
        CREATE INDEX items_rating_descending ON items (
            ((CASE WHEN jsonb_typeof(j->'rating') = 'number' THEN (j->>'rating')::float8 END) IS NULL),
            (CASE WHEN jsonb_typeof(j->'rating') = 'number' THEN (j->>'rating')::float8 END) DESC,
            bundle COLLATE "C", gen, uid COLLATE "C");
        """,
        // 5: the client state an application ended its last batch with (`LocalIndex.endBatch`),
        // per bundle, written in the batch's transaction; `last_request` as in the SQLite
        // index's migration 8 (a reindexAll not queued after it clears the state when it is
        // acknowledged).
        """
        CREATE TABLE app_client_states(
            bundle text PRIMARY KEY,
            state bytea NOT NULL CHECK (octet_length(state) <= 250),
            written double precision NOT NULL,
            last_request bigint NOT NULL DEFAULT 0
        );
        """,
        // 6: the other filter attributes of the attribute table indexed for their filters as
        // `rating` is (4), on the query compiler's own expressions, each only over the items that
        // have it; and `contentModificationDate` also for a sort newest first (what "recent"
        // asks), which every item has an entry of. A date is read through
        // `reindex_seconds`, immutable (an RFC 3339 date with its offset names one instant
        // whatever the session's time zone) so it can be indexed; it is the compiler's
        // `PostgresQueryCompiler.builtInSeconds`.
        #"""
        CREATE FUNCTION reindex_seconds(t text) RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE
            AS $$ SELECT CASE WHEN t ~ '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt ]([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$' THEN extract(epoch FROM t::timestamptz)::float8 END $$;
        CREATE INDEX items_content_type ON items ((j->>'contentType')) WHERE (j->>'contentType') IS NOT NULL;
        CREATE INDEX items_ranking_hint ON items ((CASE WHEN jsonb_typeof(j->'rankingHint') = 'number' THEN (j->>'rankingHint')::float8 END)) WHERE (CASE WHEN jsonb_typeof(j->'rankingHint') = 'number' THEN (j->>'rankingHint')::float8 END) IS NOT NULL;
        CREATE INDEX items_start_date ON items (reindex_seconds(j->>'startDate')) WHERE reindex_seconds(j->>'startDate') IS NOT NULL;
        CREATE INDEX items_end_date ON items (reindex_seconds(j->>'endDate')) WHERE reindex_seconds(j->>'endDate') IS NOT NULL;
        CREATE INDEX items_created_date ON items (reindex_seconds(j->>'contentCreationDate')) WHERE reindex_seconds(j->>'contentCreationDate') IS NOT NULL;
        CREATE INDEX items_modified_date ON items (reindex_seconds(j->>'contentModificationDate')) WHERE reindex_seconds(j->>'contentModificationDate') IS NOT NULL;
        CREATE INDEX items_modified_date_descending ON items ((reindex_seconds(j->>'contentModificationDate') IS NULL), reindex_seconds(j->>'contentModificationDate') DESC, bundle COLLATE "C", gen, uid COLLATE "C");
        """#,
        // 7: rank lists (PostgresStore+RankLists.swift): an item's `tx` is the transaction that
        // last wrote its text or attributes — set on insert by default and on such an update by
        // the trigger — so a list made in one snapshot knows which items may have changed since
        // (`tx` at or past the snapshot's oldest running transaction). The lists hold a common
        // word's best items, in relevance order, as they were in that snapshot.
        #"""
        ALTER TABLE items ADD COLUMN tx xid8 NOT NULL DEFAULT pg_current_xact_id();
        CREATE INDEX items_tx ON items (tx);
        CREATE FUNCTION reindex_item_changed() RETURNS trigger LANGUAGE plpgsql
            AS $$ BEGIN NEW.tx := pg_current_xact_id(); RETURN NEW; END $$;
        CREATE TRIGGER items_changed BEFORE UPDATE ON items FOR EACH ROW
            WHEN (OLD.doc IS DISTINCT FROM NEW.doc OR OLD.attributes IS DISTINCT FROM NEW.attributes)
            EXECUTE FUNCTION reindex_item_changed();
        CREATE TABLE rank_lists(
            key text PRIMARY KEY,
            horizon xid8 NOT NULL,
            length integer NOT NULL,
            complete boolean NOT NULL
        );
        CREATE TABLE rank_entries(
            list text NOT NULL,
            n integer NOT NULL,
            score float8 NOT NULL,
            hint float8 NOT NULL,
            bundle text NOT NULL,
            uid text NOT NULL,
            item bigint NOT NULL,
            PRIMARY KEY(list, n)
        );
        """#,
        // 8: the items in the tie order of a page (PostgresQueryCompiler's ORDER BY without
        // words: bundle, generation, identifier, bytewise), so a filter that no other index
        // answers — keywords, a declared attribute, a domain with another condition — reads items
        // in page order and stops at the page, where it read every match and sorted them (0.5 s
        // for a domain and a keyword at 1M items). The unique constraint's index has the
        // database's collation, which that ORDER BY cannot use.
        """
        CREATE INDEX items_order ON items (bundle COLLATE "C", gen, uid COLLATE "C");
        """,
        // 9: an item written again with only a new expiration changes too (`tx`): a list leaves
        // out the items expired when it was made, so one that comes back to life must be read
        // beside the lists, like any item written since.
        """
        DROP TRIGGER items_changed ON items;
        CREATE TRIGGER items_changed BEFORE UPDATE ON items FOR EACH ROW
            WHEN (OLD.doc IS DISTINCT FROM NEW.doc OR OLD.attributes IS DISTINCT FROM NEW.attributes OR OLD.expires IS DISTINCT FROM NEW.expires)
            EXECUTE FUNCTION reindex_item_changed();
        """,
        // 10: an item without a displayName scores a unit found in its title's weight class as
        // the title (PostgresQueryCompiler.unitScore), where a camel-case part took the
        // displayName's weight: the lists made before may hold such an entry with its old
        // score, so they go, to be made again by the searches that want them.
        """
        DELETE FROM rank_entries;
        DELETE FROM rank_lists;
        """,
        // 11: the document is made by the host from the full-text index's own tokens, each
        // attribute in its slot of positions (`PostgresDocument`), where the server's parser made
        // it: `reindex_slots` keeps the positions of some slots, an attribute's own words, which
        // the checks of one attribute read where they split its text again. Documents written
        // before are made again in the same transaction (`PostgresStore.rewriteDocuments`), and
        // the lists, made from them, go.
        #"""
        CREATE OR REPLACE FUNCTION reindex_slots(d tsvector, slots int[]) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
            SELECT coalesce(string_agg('''' || replace(replace(u.lexeme, '\', '\\'), '''', '''''') || ''':' || p.places, ' '), '')::tsvector
            FROM unnest(d) u, LATERAL (SELECT string_agg(x::text, ',') AS places FROM unnest(u.positions) x WHERE x / \#(PostgresDocument.slotWidth) = ANY(slots)) p
            WHERE p.places IS NOT NULL
        $$;
        DELETE FROM rank_entries;
        DELETE FROM rank_lists;
        """#,
        // 12: the score is BM25F, as on SQLite (PostgresQueryCompiler.unitScore). Each item
        // keeps its length in tokens and its words' weighted frequencies (`PostgresDocument.Made`),
        // made again with the documents (`PostgresStore.rewriteDocuments`); each bundle's items
        // and tokens, of every generation, are counted by statement triggers in
        // `full_text_totals` (N and the average length; `changes` grows at every write, so a
        // word's count is kept while it stands still, in `unit_frequencies` for every process).
        // `rank_statistics` pins the average
        // length when the first list is made, and a list of several words together keeps the
        // rarities it was ordered by. The lists made before held field scores: they go. (Each
        // statement may run again on an index whose version was set back: a test's, or a
        // restored copy's.) The triggers' function finds its table in the index's schema
        // whatever the writing session's search path (`SET search_path FROM CURRENT`: the
        // migration runs in the schema).
        #"""
        ALTER TABLE items ADD COLUMN IF NOT EXISTS length integer NOT NULL DEFAULT 0, ADD COLUMN IF NOT EXISTS tf jsonb NOT NULL DEFAULT '{}';
        CREATE TABLE IF NOT EXISTS full_text_totals(
            bundle text PRIMARY KEY,
            items bigint NOT NULL,
            tokens bigint NOT NULL,
            changes bigint NOT NULL
        );
        DELETE FROM full_text_totals;
        INSERT INTO full_text_totals(bundle, items, tokens, changes) SELECT bundle, count(*), sum(length), 1 FROM items GROUP BY bundle;
        CREATE OR REPLACE FUNCTION reindex_count_items() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
        BEGIN
            IF TG_OP = 'INSERT' THEN
                INSERT INTO full_text_totals AS t(bundle, items, tokens, changes)
                    SELECT bundle, count(*), sum(length), 1 FROM new_rows GROUP BY bundle ORDER BY bundle
                    ON CONFLICT(bundle) DO UPDATE SET items = t.items + EXCLUDED.items, tokens = t.tokens + EXCLUDED.tokens, changes = t.changes + 1;
            ELSIF TG_OP = 'DELETE' THEN
                INSERT INTO full_text_totals AS t(bundle, items, tokens, changes)
                    SELECT bundle, -count(*), -sum(length), 1 FROM old_rows GROUP BY bundle ORDER BY bundle
                    ON CONFLICT(bundle) DO UPDATE SET items = t.items + EXCLUDED.items, tokens = t.tokens + EXCLUDED.tokens, changes = t.changes + 1;
            ELSE
                INSERT INTO full_text_totals AS t(bundle, items, tokens, changes)
                    SELECT bundle, 0, sum(length), 1 FROM (SELECT bundle, length FROM new_rows UNION ALL SELECT bundle, -length FROM old_rows) c
                    GROUP BY bundle ORDER BY bundle
                    ON CONFLICT(bundle) DO UPDATE SET tokens = t.tokens + EXCLUDED.tokens, changes = t.changes + 1;
            END IF;
            RETURN NULL;
        END $$;
        DROP TRIGGER IF EXISTS items_counted_insert ON items;
        DROP TRIGGER IF EXISTS items_counted_update ON items;
        DROP TRIGGER IF EXISTS items_counted_delete ON items;
        CREATE TRIGGER items_counted_insert AFTER INSERT ON items REFERENCING NEW TABLE AS new_rows
            FOR EACH STATEMENT EXECUTE FUNCTION reindex_count_items();
        CREATE TRIGGER items_counted_update AFTER UPDATE ON items REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
            FOR EACH STATEMENT EXECUTE FUNCTION reindex_count_items();
        CREATE TRIGGER items_counted_delete AFTER DELETE ON items REFERENCING OLD TABLE AS old_rows
            FOR EACH STATEMENT EXECUTE FUNCTION reindex_count_items();
        CREATE OR REPLACE FUNCTION reindex_frequency(d tsvector, words text[], prefix boolean, slots int[]) RETURNS float8
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
            SELECT coalesce(sum((ARRAY[\#(PostgresDocument.slotWeights.map(String.init).joined(separator: ","))])[s.p / \#(PostgresDocument.slotWidth) + 1]), 0)::float8
            FROM (SELECT x AS p FROM unnest(d) u, unnest(u.positions) x
                WHERE (u.lexeme = words[1] OR (prefix AND cardinality(words) = 1 AND starts_with(u.lexeme, words[1])))
                    AND x / \#(PostgresDocument.slotWidth) = ANY(slots)) s
            WHERE NOT EXISTS (SELECT 1 FROM generate_series(2, cardinality(words)) k WHERE NOT EXISTS (
                SELECT 1 FROM unnest(d) v, unnest(v.positions) y
                WHERE y = s.p + k - 1 AND (v.lexeme = words[k] OR (prefix AND k = cardinality(words) AND starts_with(v.lexeme, words[k])))))
        $$;
        CREATE TABLE IF NOT EXISTS unit_frequencies(phrase text PRIMARY KEY, changes bigint NOT NULL, n bigint NOT NULL);
        DELETE FROM unit_frequencies;
        CREATE TABLE IF NOT EXISTS rank_statistics(average float8 NOT NULL);
        DELETE FROM rank_statistics;
        ALTER TABLE rank_lists ADD COLUMN IF NOT EXISTS rarities float8[];
        DELETE FROM rank_entries;
        DELETE FROM rank_lists;
        """#,
        // 13: a word longer than a lexeme may be is kept in its stored form
        // (`PostgresDocument.storedWord`), where it was left out. The documents that may hold
        // one, of items whose attributes take more bytes than such a word, are made again
        // (`PostgresStore.rewriteDocuments(attributesLongerThan:)`); a document that changes
        // moves its item's `tx`, so the lists know it.
        "DELETE FROM unit_frequencies",
        // 14: a kept count stays of use after writes (`PostgresStore.documentFrequency`): it
        // keeps the snapshot it is of, and the items written since are those whose `tx` that
        // snapshot does not see; the items gone since are logged in `items_gone`, with their
        // document and the `tx` they had, by statement triggers on `items` (an update only for
        // the items whose document or attributes changed, which moves their `tx`). A statement
        // that takes more than 1,000 items away (a reindexAll's old generation, a purge), or
        // any while no count is kept, is not logged: it moves its bundles' `resets` instead (rows
        // its statement has locked already), and a count kept under other resets is made again.
        #"""
        ALTER TABLE full_text_totals ADD COLUMN IF NOT EXISTS resets bigint NOT NULL DEFAULT 0;
        CREATE TABLE IF NOT EXISTS items_gone(
            tx xid8 NOT NULL DEFAULT pg_current_xact_id(),
            old_tx xid8 NOT NULL,
            doc tsvector NOT NULL
        );
        CREATE INDEX IF NOT EXISTS items_gone_tx ON items_gone(tx);
        DELETE FROM unit_frequencies;
        ALTER TABLE unit_frequencies ADD COLUMN IF NOT EXISTS snapshot pg_snapshot, ADD COLUMN IF NOT EXISTS resets bigint;
        \#(itemsGoneLog(exact: false))
        DROP TRIGGER IF EXISTS items_gone_update ON items;
        DROP TRIGGER IF EXISTS items_gone_delete ON items;
        CREATE TRIGGER items_gone_update AFTER UPDATE ON items REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
            FOR EACH STATEMENT EXECUTE FUNCTION reindex_items_gone();
        CREATE TRIGGER items_gone_delete AFTER DELETE ON items REFERENCING OLD TABLE AS old_rows
            FOR EACH STATEMENT EXECUTE FUNCTION reindex_items_gone();
        """#,
        // 15: where the document had to leave positions out (an attribute past its 2,047th
        // token, a word past its 256th occurrence) or holds a word longer than 2,000 bytes, the
        // item keeps every position of every word (`items.places`,
        // `PostgresDocument.Made.places`): a phrase, a word of some attributes or a long prefix
        // is found there (`reindex_places`: the positions where it starts, in some slots, each
        // word's positions shifted back by its place in the phrase and grouped, so linear in the
        // item's positions however often its words repeat) and counted there
        // (`reindex_places_frequency`) in such an item, as SQLite finds it, where the document's
        // positions missed it. Those few items' documents have an index of their own
        // (`items_places_doc`), so a query reads them beside its matches through the whole
        // index. The items gone keep theirs, and their attributes (`j`), for the counts brought
        // up to date, of a word of some attributes too. The documents
        // that may need them are made again (`PostgresStore.clippedDocuments`); the counts of
        // phrases go.
        #"""
        ALTER TABLE items ADD COLUMN IF NOT EXISTS places jsonb;
        ALTER TABLE items_gone ADD COLUMN IF NOT EXISTS places jsonb, ADD COLUMN IF NOT EXISTS j jsonb;
        CREATE INDEX IF NOT EXISTS items_places_doc ON items USING gin(doc) WHERE places IS NOT NULL;
        CREATE OR REPLACE FUNCTION reindex_places(places jsonb, words text[], prefix boolean, slots int[]) RETURNS SETOF integer
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
            SELECT t.p FROM (
                SELECT x.x::integer - w.k::integer + 1 AS p, w.k
                FROM unnest(words) WITH ORDINALITY w(word, k) CROSS JOIN LATERAL (
                    SELECT x FROM jsonb_array_elements_text(places -> w.word) x WHERE NOT (prefix AND w.k = cardinality(words))
                    UNION ALL
                    SELECT x FROM jsonb_each(places) e, jsonb_array_elements_text(e.value) x
                    WHERE prefix AND w.k = cardinality(words) AND starts_with(e.key, w.word)
                ) x
            ) t
            WHERE t.p / \#(PostgresDocument.placesSlotWidth) = ANY(slots)
            GROUP BY t.p HAVING count(DISTINCT t.k) = cardinality(words)
        $$;
        CREATE OR REPLACE FUNCTION reindex_places_frequency(places jsonb, words text[], prefix boolean, slots int[]) RETURNS float8
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
            SELECT coalesce(sum((ARRAY[\#(PostgresDocument.slotWeights.map(String.init).joined(separator: ","))])[p / \#(PostgresDocument.placesSlotWidth) + 1]), 0)::float8
            FROM reindex_places(places, words, prefix, slots) p
        $$;
        \#(itemsGoneLog(exact: true))
        DELETE FROM unit_frequencies;
        """#,
        // 16: an item whose words do not all fit in its document (a `tsvector` holds 1 MiB) has
        // its document marked (`PostgresDocument.overflowMark`), and a query looks for its words
        // in its exact positions too (`PostgresQueryCompiler.overflowed`). The documents that may
        // be such are made again (`PostgresStore.overflowedDocuments`); where one is, the counts
        // and lists made without its words go (`PostgresStore.migrate`). Whether any item (or any
        // item gone, for the counts brought up to date) is so marked is asked at every search,
        // so it has partial indexes of its own, empty but for such items: through the document's
        // index, the planner read every item to learn that none is (0.44 s at 1M items).
        """
        CREATE INDEX IF NOT EXISTS items_overflowed ON items(id) WHERE doc @@ \(PostgresStore.overflowMarkQuery);
        CREATE INDEX IF NOT EXISTS items_gone_places ON items_gone(tx) WHERE places IS NOT NULL;
        """,
        // 17: past the lists' limit, the list used least lately goes first, not the oldest made:
        // each list records when a search last read it (`used`, written when the record is a
        // minute old: `PostgresStore.recordListUse`), so a fleet's common words keep their lists
        // while the words searched once make room.
        "ALTER TABLE rank_lists ADD COLUMN IF NOT EXISTS used timestamptz NOT NULL DEFAULT now()",
        // 18: every search joins an item to its live bundle, which the planner judges by the
        // bundles' statistics. Autovacuum analyzes a table after 50 changes and a tenth of its
        // rows, so a table of a few bundles was never analyzed, and the planner took the join to
        // keep one item in 200 (`PostgresStore.analyzeBundlesIfNew`). Analyzed now, and by
        // autovacuum after any change from now on.
        """
        ALTER TABLE bundles SET (autovacuum_analyze_threshold = 0, autovacuum_analyze_scale_factor = 0);
        ANALYZE bundles;
        """,
    ]

    /// The migration from which the documents are the host's (`PostgresDocument`).
    static let hostDocuments = 11
    /// The migration from which each item keeps its length and its words' frequencies.
    static let scoredDocuments = 12
    /// The migration from which a word longer than a lexeme is in the document.
    static let longWords = 13
    /// The most items one statement takes away that `items_gone` logs (migration 14).
    static let loggedGone = 1_000
    /// The migration from which an item whose document left positions out keeps them all.
    static let exactPlaces = 15
    /// The migration from which an item whose document left words out is marked.
    static let overflowMarks = 16

    /// The function of the triggers that log the items gone (migration 14), with their exact
    /// positions and attributes too from migration 15 (`places`, `j`).
    static func itemsGoneLog(exact: Bool) -> String {
        let extra = exact ? ", places, j" : ""
        return """
        CREATE OR REPLACE FUNCTION reindex_items_gone() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
        DECLARE
            gone bigint;
        BEGIN
            IF TG_OP = 'UPDATE' THEN
                SELECT count(*) INTO gone FROM (SELECT 1 FROM old_rows o JOIN new_rows n USING (id) WHERE n.tx <> o.tx LIMIT \(loggedGone + 1)) s;
            ELSE
                SELECT count(*) INTO gone FROM (SELECT 1 FROM old_rows LIMIT \(loggedGone + 1)) s;
            END IF;
            IF gone = 0 THEN
                RETURN NULL;
            ELSIF gone > \(loggedGone) OR NOT EXISTS (SELECT 1 FROM unit_frequencies) THEN
                UPDATE full_text_totals SET resets = resets + 1 WHERE bundle IN (SELECT DISTINCT bundle FROM old_rows);
            ELSIF TG_OP = 'UPDATE' THEN
                INSERT INTO items_gone(old_tx, doc\(extra)) SELECT o.tx, o.doc\(exact ? ", o.places, o.j" : "") FROM old_rows o JOIN new_rows n USING (id) WHERE n.tx <> o.tx;
            ELSE
                INSERT INTO items_gone(old_tx, doc\(extra)) SELECT tx, doc\(extra) FROM old_rows;
            END IF;
            RETURN NULL;
        END $$;
        """
    }
}
