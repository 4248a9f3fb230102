#!/usr/bin/env python3
"""A film catalogue for the query tests: reindexAll puts 120 films with a content type, a
rating, a start date, keywords, authors and a domain per decade, all derived from the number;
plus "film.dune" (title "Dune", rating 5, authors "Frank Herbert") and "film.dunes"
(title "Dunes of Ürgüp", a documentary). reindexItems puts nothing and acknowledges."""
from fixturelib import put, send, serve, success

GENRES = ["drama", "comedy", "thriller", "documentary"]


def films():
    result = []
    for n in range(120):
        genre = GENRES[n % 4]
        result.append({
            "uniqueIdentifier": "film.%03d" % n,
            "domainIdentifier": "com.example.films.%s" % genre,
            "attributes": {
                "title": "Picture %d" % n,
                "contentDescription": "A %s about the harbour, number %d" % (genre, n),
                "contentType": "public.movie" if n % 3 else "public.episode",
                "rating": n % 6,
                "startDate": "2026-01-%02dT20:00:00Z" % (1 + n % 28),
                "keywords": [genre, "harbour"],
                "authors": ["Director %d" % (n % 5)],
            },
        })
    result.append({"uniqueIdentifier": "film.dune", "domainIdentifier": "com.example.films.drama", "attributes": {
        "title": "Dune", "contentDescription": "A drama in the desert", "contentType": "public.movie", "rating": 5,
        "startDate": "2026-02-01T20:00:00Z", "keywords": ["drama", "desert"], "authors": ["Frank Herbert", "Ursula K. Le Guin"]}})
    result.append({"uniqueIdentifier": "film.dunes", "domainIdentifier": "com.example.films.documentary", "attributes": {
        "title": "Dunes of Ürgüp", "contentDescription": "A documentary", "contentType": "public.movie", "rating": 3.5,
        "startDate": "2026-02-02T20:00:00Z", "keywords": ["documentary"]}})
    return result


def handle(message):
    request_id = message["id"]
    if message["method"] == "reindexAll":
        all_films = films()
        for start in range(0, len(all_films), 50):
            put(all_films[start:start + 50])
    send(success(request_id))


serve(handle)
