"""Small conversations written for the tests."""

# Two sittings of a chat, as JSONL rows with external ids.
JSONL_TURNS = [
    {"speaker": "Ann", "text": "I adopted a grey cat called Pixel today.",
     "timestamp": "2024-03-01T09:15:00", "id": "m-1"},
    {"speaker": "Ben", "text": "Congratulations! Cats are great company, Ann.",
     "timestamp": "2024-03-01T09:16:00", "id": "m-2"},
    {"speaker": "Ann", "text": "Pixel already knocked a mug off the table.",
     "timestamp": "2024-03-01T09:20:00", "id": "m-3"},
    {"speaker": "Ben", "text": "I started learning to paint with oils this week.",
     "timestamp": "2024-03-05T18:00:00", "id": "m-4"},
    {"speaker": "Ann", "text": "Which painting are you working on first?",
     "timestamp": "2024-03-05T18:02:00", "id": "m-5"},
    {"speaker": "Ben", "text": "A portrait of my grandmother in her garden.",
     "timestamp": "2024-03-05T18:05:00", "id": "m-6"},
]

# Twelve garden days, one turn each: a question about the garden matches every one, so how many
# memories a search returns is its k.
GARDEN_TURNS = [
    {"speaker": "me", "text": f"Worked in the garden on day {day}: weeding and watering.",
     "timestamp": f"2024-04-{day:02d}T17:00:00", "id": f"g-{day}"}
    for day in range(1, 13)
]
