-- AlterEnum: operator corrections of a balance (credit or debit with a reason)
ALTER TYPE "LedgerEntryKind" ADD VALUE 'adjustment';
