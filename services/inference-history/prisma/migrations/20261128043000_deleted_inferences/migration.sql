-- Deleted records leave only their id (and team and time), so a redelivered event never stores them again.
CREATE TABLE "deleted_inferences" (
    "id" UUID NOT NULL,
    "team_id" UUID NOT NULL,
    "deleted_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "deleted_inferences_pkey" PRIMARY KEY ("id")
);
