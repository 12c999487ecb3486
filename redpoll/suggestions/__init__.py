"""Who to follow (suggestions): from the follow graph, and the most followed local accounts."""
